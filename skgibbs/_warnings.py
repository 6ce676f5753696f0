"""Each kind of warning shown once per place where Python's filter says ``"default"``, across many fits.

Python's ``"default"`` action shows a warning once per text, category and
line of code: it records each in the calling module's registry and clears
those records whenever the warning filters change. scikit-learn's input
validation enters ``warnings.catch_warnings`` on every call, and with it
every ``fit`` of every estimator clears the records, so a loop or a
``GridSearchCV`` of fits that fall short the same way prints the same
``SamplerWarning`` once per fit. :func:`warn` keeps its own record of what
it has shown, for the ``"default"`` and ``"module"`` actions only: any other
action (``"always"``, ``"error"``, ``"ignore"``, ``"once"``) is Python's to
apply. The record is cleared when the place warnings go to changes, that
is when ``warnings.catch_warnings(record=True)`` starts a new list, as
pytest does for every test, so a block that records warnings sees the
first of each kind again.

The kind of a warning is its class and its first line with the numbers left
out: skgibbs's warnings state what they measured in their text, and a fit
that falls short the same way as an earlier one, with other numbers, is
the same kind.
"""

import re
import sys
import threading
import warnings

__all__ = ["warn", "NUMBER", "kind"]

#: a number in a warning's text (a measured value), not part of a name (``max_grad_evals``, ``R-hat``)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?%?")

_lock = threading.Lock()
_shown = {"sink": (None, None), "keys": set()}


def _filters():
    get = getattr(warnings, "_get_filters", None)  # Python 3.14's context-local filters
    return get() if get is not None else warnings.filters


def _action(category, text, module, lineno):
    """The action Python's filters give this warning (the first filter that matches, as ``warn_explicit``)."""
    for action, message, cat, mod, line in _filters():
        if (
            (message is None or message.match(text))
            and issubclass(category, cat)
            and (mod is None or mod.match(module))
            and (line == 0 or line == lineno)
        ):
            return action
    return warnings.defaultaction


def kind(text):
    """What tells a warning's text from others: its first line, numbers left out.

    Examples
    --------
    >>> kind("The chains have not mixed: R-hat 1.3.\\nTo improve: max_grad_evals=40000.")
    'The chains have not mixed: R-hat .'
    """
    return NUMBER.sub("", text.split("\n", 1)[0])


def warn(warning, stacklevel=1):
    """``warnings.warn(warning, stacklevel)``, unless the same kind was shown here before under ``"default"``.

    Parameters
    ----------
    warning : Warning
        An instance; its class and :func:`kind` of its text are its kind.
    stacklevel : int, default=1
        As :func:`warnings.warn`'s, counted from the caller of this function.

    Returns
    -------
    shown : bool
        False where the warning was left out because it had been shown.

    Examples
    --------
    >>> import warnings
    >>> from skgibbs import SamplerWarning
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.resetwarnings()  # Python's default: the "default" action
    ...     for rhat in (1.2, 1.3, 1.4):
    ...         _ = warn(SamplerWarning(f"The chains have not mixed: R-hat {rhat}.", rhat=rhat))
    >>> [str(w.message) for w in seen]
    ['The chains have not mixed: R-hat 1.2.']
    """
    try:
        frame = sys._getframe(stacklevel)
        module, lineno = frame.f_globals.get("__name__", "<string>"), frame.f_lineno
    except ValueError:  # past the outermost frame: Python's warn uses the "sys" module, line 1
        module, lineno = "sys", 1
    category, text = type(warning), str(warning)
    action = _action(category, text, module, lineno)
    if action in ("default", "module"):
        key = (category, kind(text), module, lineno if action == "default" else 0)
        sink = (warnings.showwarning, getattr(warnings, "_showwarnmsg_impl", None))
        with _lock:
            if any(a is not b for a, b in zip(sink, _shown["sink"])):
                _shown["sink"], _shown["keys"] = sink, set()
            if key in _shown["keys"]:
                return False
            _shown["keys"].add(key)
    warnings.warn(warning, stacklevel=stacklevel + 1)
    return True
