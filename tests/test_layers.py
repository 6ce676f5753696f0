"""The package's layers, as rules: imports point down, private names stay home, no cycles.

The samplers are layered as in :doc:`/developers`: the pure kernel modules
(``init`` / ``step`` functions of states, tensors and generators) at the
bottom, beside the shared target, adaptation and randomness; the runner and
the sampler objects above them; the estimators, criteria and displays on
top. The rules are read from the source (module-level imports, by
:mod:`ast`), so that a change that breaks them fails here rather than in a
review.
"""

import ast
import pathlib

import pytest

import skgibbs

ROOT = pathlib.Path(skgibbs.__file__).parent

#: the pure kernel modules, relative to skgibbs/samplers
KERNELS = (
    "hmc/kernel.py",
    "hmc/gibbs.py",
    "langevin/mala.py",
    "langevin/sgld.py",
    "sghmc/kernel.py",
    "rj/rjmcmc.py",
    "rj/rjhmc.py",
    "vi/kernel.py",
    "smc/kernel.py",
    "smc/metric.py",
    "smc/sparse.py",
    "mclmc/kernel.py",
    "mclmc/adjusted.py",
    "mclmc/integrator.py",
    "mclmc/tuning.py",
)
#: what a kernel module may not import: drivers, sampler objects, the estimators, the criteria
ABOVE_KERNELS = (
    "skgibbs.samplers.base",
    "skgibbs.samplers.runner",
    "skgibbs.samplers.*.sampler",
    "skgibbs.samplers.*.hmc_sampler",
    "skgibbs.samplers.*.optimize",
    "skgibbs.criteria",
    "skgibbs.estimators",
    "skgibbs.regressor",  # the estimators' former paths (they re-export skgibbs.estimators.*)
    "skgibbs.classifier",
    "skgibbs.sparse",
    "skgibbs.problem",
    "skgibbs.plan",
    "skgibbs.pipeline",
    "skgibbs.persistence",
    "skgibbs.display",
    "skgibbs.model_selection",
    "skgibbs.control_variates",
)


def module_name(path, root=ROOT):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path, root=ROOT):
    name = module_name(path, root)
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def imports(path, root=ROOT, top_level=True):
    """``(line, module, names)`` of the skgibbs imports of a file; module-level only with ``top_level``.

    ``module`` is absolute; ``names`` the imported names (a ``from m import a``
    of a submodule ``a`` is reported as an import of ``m.a``).
    """
    tree = ast.parse(path.read_text())
    package = _package(path, root)
    nodes = tree.body if top_level else [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    if top_level:  # module level, and inside module-level if/try blocks
        stack, nodes = list(tree.body), []
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                nodes.append(node)
            elif isinstance(node, (ast.If, ast.Try)):
                stack.extend(node.body + node.orelse + getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    stack.extend(handler.body)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("skgibbs"):
                    out.append((node.lineno, alias.name, ()))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("skgibbs"):
                continue
            names = tuple(a.name for a in node.names)
            submodules = [n for n in names if _exists(f"{module}.{n}", root)]
            for n in submodules:
                out.append((node.lineno, f"{module}.{n}", ()))
            rest = tuple(n for n in names if n not in submodules)
            if rest or not submodules:
                out.append((node.lineno, module, rest))
    return out


def _exists(module, root=ROOT):
    rel = pathlib.Path(*module.split(".")[1:])
    return (root / rel).with_suffix(".py").exists() or (root / rel / "__init__.py").exists()


def _matches(module, pattern):
    parts, pats = module.split("."), pattern.split(".")
    if len(parts) < len(pats):
        return False
    return all(p == "*" or p == q for p, q in zip(pats, parts))


def upward_imports(root=ROOT, kernels=KERNELS, above=ABOVE_KERNELS):
    """Imports from a kernel module of a driver, a sampler object, an estimator or the criteria."""
    found = []
    for rel in kernels:
        path = root / "samplers" / rel
        for line, module, _ in imports(path, root, top_level=False):
            if any(_matches(module, pattern) for pattern in above):
                found.append(f"samplers/{rel}:{line} imports {module}")
    return found


def private_imports_across_packages(root=ROOT):
    """``from m import _name`` where ``m`` is not in the importer's own folder.

    A private name belongs to its folder (``skgibbs/samplers/smc/`` may share
    ``_OneByOne`` among its modules); the modules at the package's root
    (``skgibbs._random``, ``skgibbs._threads``, ...) are importable from
    anywhere, their private names are not.
    """
    found = []
    for path in sorted(root.rglob("*.py")):
        own_package = _package(path, root)
        for line, module, names in imports(path, root, top_level=False):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            source = root.parent.joinpath(*module.split("."))
            source_package = module if source.is_dir() else module.rsplit(".", 1)[0]
            if private and source_package != own_package:
                found.append(f"{path.relative_to(root)}:{line} imports {', '.join(private)} from {module}")
    return found


def import_cycles(root=ROOT, top_level=True):
    """Strongly connected groups of modules that import each other.

    Module-level imports with ``top_level``; with ``top_level=False`` also the
    imports inside functions, which defer a cycle rather than remove it. A
    package's ``__init__`` that re-exports its own submodules is not an edge
    of a cycle (importing a submodule runs its package first by design).
    """
    graph = {}
    for path in root.rglob("*.py"):
        name = module_name(path, root)
        edges = set()
        for _, module, _ in imports(path, root, top_level=top_level):
            if path.name == "__init__.py" and module.startswith(name + "."):
                continue
            if module != name:
                edges.add(module)
        graph[name] = edges
    # Tarjan's strongly connected components
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def function_level_imports(root=ROOT):
    """skgibbs imports inside functions (a way to dodge a cycle), outside the package's ``__init__``s."""
    found = []
    for path in sorted(root.rglob("*.py")):
        top = {(line, module) for line, module, _ in imports(path, root)}
        for line, module, _ in imports(path, root, top_level=False):
            if (line, module) not in top:
                found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


def test_kernel_modules_exist():
    for rel in KERNELS:
        assert (ROOT / "samplers" / rel).exists(), rel


def test_no_kernel_module_imports_a_driver_a_sampler_object_an_estimator_or_the_criteria():
    assert upward_imports() == []


def test_no_private_name_is_imported_across_subpackages():
    assert private_imports_across_packages() == []


@pytest.mark.parametrize("top_level", [True, False], ids=["module-level", "deferred-too"])
def test_no_import_cycles(top_level):
    assert import_cycles(top_level=top_level) == []


@pytest.mark.parametrize("rel", KERNELS)
def test_kernel_modules_have_the_documented_signatures(rel):
    """Every kernel module's ``init`` / ``step`` take ``(generators, ..., target, params)`` first."""
    tree = ast.parse((ROOT / "samplers" / rel).read_text())
    functions = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    if "step" in functions:
        assert functions["step"][:4] == ["generators", "state", "target", "params"], rel
    if "init" in functions and rel != "vi/kernel.py":  # q's init takes its starting mean, not a state
        assert functions["init"][:4] in (["generators", "target", "theta", "params"], ["generators", "target", "theta"]), rel


#: the modules outside skgibbs/estimators/ that may import it: the package's root (lazily, for
#: ``from skgibbs import GibbsMLPRegressor``), the saving of fitted estimators, and the estimators'
#: former paths (which re-export the moved modules for pickles)
IMPORT_THE_ESTIMATORS = ("skgibbs", "skgibbs.persistence", "skgibbs.regressor", "skgibbs.classifier", "skgibbs.sparse")


def estimator_importers(root=ROOT):
    """Modules outside ``skgibbs/estimators/`` that import it (at any level), but for the allowed ones."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        if name.startswith("skgibbs.estimators") or name in IMPORT_THE_ESTIMATORS:
            continue
        for line, module, names in imports(path, root, top_level=False):
            if _matches(module, "skgibbs.estimators") or (module == "skgibbs" and "estimators" in names):
                found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


def test_nothing_below_the_estimators_imports_them():
    """The estimators are the top layer: the problem, the samplers and the model never import them."""
    assert estimator_importers() == []


def test_the_estimators_former_paths_re_export_and_hold_no_code():
    """``skgibbs/regressor.py`` and its two siblings give the moved module's public names, nothing else."""
    import importlib

    from skgibbs.estimators import FORMER_MODULES

    for old, new in FORMER_MODULES.items():
        former, moved = importlib.import_module(old), importlib.import_module(new)
        assert former.__all__ == moved.__all__
        assert all(getattr(former, name) is getattr(moved, name) for name in moved.__all__)
        path = ROOT / (old.split(".", 1)[1] + ".py")
        body = ast.parse(path.read_text()).body
        code = [n for n in body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        assert len(code) == 2 and all(isinstance(n, ast.ImportFrom) for n in code), path
    shims = [p for p in ROOT.glob("*.py") if f"skgibbs.{p.stem}" in FORMER_MODULES]
    assert len(shims) == len(FORMER_MODULES) == 3
