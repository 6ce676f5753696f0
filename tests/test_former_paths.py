"""Estimators saved before the samplers moved into their family's folders still load."""

import importlib
import pickle

import pytest

from skgibbs import persistence
from skgibbs.samplers import FORMER_MODULES, get_sampler


@pytest.mark.parametrize("old, new", sorted(FORMER_MODULES.items()))
def test_a_former_module_path_imports_the_sampler_module(old, new):
    module = importlib.import_module(old)
    sampler_module = importlib.import_module(new)
    names = [n for n in dir(sampler_module) if n[:1].isupper() and isinstance(getattr(sampler_module, n), type)]
    assert names and all(getattr(module, n) is getattr(sampler_module, n) for n in names if hasattr(module, n))


@pytest.mark.parametrize("name", ["hmc", "csmala", "sgld", "rjmcmc", "rjhmc", "vi", "smc", "sghmc"])
def test_a_sampler_pickled_under_its_former_path_loads_and_is_trusted(name):
    sampler = get_sampler(name)
    cls = type(sampler)
    (old,) = [o for o, n in FORMER_MODULES.items() if n == cls.__module__]
    # protocol 0 writes the class's module as text: put the former path in its place
    data = pickle.dumps(sampler, protocol=0).replace(cls.__module__.encode(), old.encode())
    assert old.encode() in data
    loaded = pickle.loads(data)
    assert type(loaded) is cls and loaded.get_params() == sampler.get_params()
    assert f"{old}.{cls.__qualname__}" in persistence.TRUSTED_TYPES
