"""Every public name's docstring reads as scikit-learn's do (numpydoc, after skglm's
test_docstring_parameters.py): a summary, Parameters naming the signature's parameters in order,
Returns for what returns a value, Attributes for the estimators, and Examples that run as
doctests."""
import ast
import doctest
import importlib
import inspect
import io
import textwrap
import warnings

import pytest
from numpydoc.docscrape import NumpyDocString
from sklearn.datasets import make_classification

import fastsvm

# the names of fastsvm.__all__; a name added there and not here fails test_every_public_name_is_listed
TOP_LEVEL = ("load_svmlight_file", "load_svmlight_files", "dump_svmlight_file",
             "FastSVMError", "FileFormatError", "ParameterError",
             "Model", "load_model", "save_model", "Params",
             "predict", "decision_values", "predict_probability",
             "fit_model", "fit_path", "fit_nu_path", "grid_search", "GridResult",
             "LinearSVC", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RandomFourierFeatures", "Nystroem")
ESTIMATORS = ("LinearSVC", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RandomFourierFeatures", "Nystroem")
# public names outside fastsvm.__all__: (module, name)
MODULE_LEVEL = (("fastsvm.distributed", "fit_linear"),
                ("fastsvm.cli.train", "entry"), ("fastsvm.cli.predict", "entry"),
                ("fastsvm.cli.scale", "entry"), ("fastsvm.cli.grid", "entry"))
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def own_methods(estimator):
    """{name: method} of the public methods an estimator's fastsvm classes define (those it takes
    unchanged from scikit-learn are scikit-learn's to document)."""
    methods = {}
    for name in dir(estimator):
        if name.startswith("_") or isinstance(inspect.getattr_static(estimator, name), property):
            continue   # a property is a fitted attribute: the Attributes section says it
        value = getattr(estimator, name)
        if inspect.isfunction(value) and inspect.unwrap(value).__module__.startswith("fastsvm"):
            methods[name] = value
    return methods


def public_objects():
    """(qualified name, object): every name whose docstring the test holds, each object once."""
    seen, objects = set(), []

    def add(qualname, obj):
        key = inspect.unwrap(obj)
        if key not in seen:
            seen.add(key)
            objects.append((qualname, obj))

    for name in TOP_LEVEL:
        add(f"fastsvm.{name}", getattr(fastsvm, name))
    for module, name in MODULE_LEVEL:
        add(f"{module}.{name}", getattr(importlib.import_module(module), name))
    for name in ESTIMATORS:
        for method_name, method in sorted(own_methods(getattr(fastsvm, name)).items()):
            add(f"fastsvm.{name}.{method_name}", method)
    return objects


OBJECTS = public_objects()
IDS = [qualname for qualname, _ in OBJECTS]


def signature_parameters(obj):
    """The parameters a caller passes, in order (no self, *args or **kwargs)."""
    if inspect.isclass(obj) and not inspect.isfunction(obj.__init__):
        return []   # an exception that takes ValueError's arguments
    return [name for name, parameter in inspect.signature(obj).parameters.items()
            if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]


def returns_a_value(function):
    """Whether the function's own body (not a nested function's) returns or yields a value."""
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    definition = ast.parse(source).body[0]
    pending = list(definition.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        pending.extend(ast.iter_child_nodes(node))
    return False


def parsed(obj):
    docstring = inspect.getdoc(obj)
    assert docstring, "no docstring"
    return NumpyDocString(docstring)


def test_every_public_name_is_listed():
    assert sorted(TOP_LEVEL) == sorted(fastsvm.__all__)
    assert set(ESTIMATORS) <= set(TOP_LEVEL)


@pytest.mark.parametrize("qualname, obj", OBJECTS, ids=IDS)
def test_docstring_sections(qualname, obj):
    doc = parsed(obj)
    assert doc["Summary"], "no summary line"
    documented = [parameter.name for parameter in doc["Parameters"]]
    # numpydoc reads "a, b : float" as one entry
    documented = [name.strip() for entry in documented for name in entry.split(",")]
    documented = [name for name in documented if not name.startswith("*")]   # *args, **kwargs may be said
    assert documented == signature_parameters(obj), "Parameters differ from the signature"
    undescribed = [parameter.name for parameter in doc["Parameters"] if not parameter.desc or not parameter.type]
    assert not undescribed, f"parameters without a type or description: {undescribed}"
    if not inspect.isclass(obj) and returns_a_value(obj):
        assert doc["Returns"] or doc["Yields"], "no Returns section"
    if inspect.isclass(obj) and obj.__name__ in ESTIMATORS and qualname == f"fastsvm.{obj.__name__}":
        assert doc["Attributes"], "an estimator without Attributes"
    assert doc["Examples"], "no Examples section"


@pytest.mark.parametrize("qualname, obj", OBJECTS, ids=IDS)
def test_examples_run(qualname, obj):
    test = doctest.DocTestParser().get_doctest(inspect.getdoc(obj) or "", {}, qualname, None, 0)
    assert test.examples, "no doctest examples"
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()


# set only when X has feature names
CONDITIONAL_ATTRIBUTES = {"feature_names_in_"}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_attributes_are_those_a_fit_sets(name):
    """Each attribute a fit sets has its line in Attributes, and each line names one a fit sets."""
    estimator_class = getattr(fastsvm, name)
    documented = {attribute.name for attribute in parsed(estimator_class)["Attributes"]}
    X, y = make_classification(n_samples=40, n_features=4, random_state=0)
    linear = {"kernel": "linear"} if "kernel" in inspect.signature(estimator_class).parameters else {}
    if name == "Nystroem":
        linear = {"n_components": 10}
    estimator = estimator_class(**linear).fit(X, y)
    set_by_fit = {key for key in vars(estimator) if key.endswith("_") and not key.startswith("_")}
    assert set_by_fit <= documented, f"fitted attributes without a line in Attributes: {set_by_fit - documented}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # probA_ and probB_ are deprecated with probability
        missing = {key for key in documented - CONDITIONAL_ATTRIBUTES if not hasattr(estimator, key)}
    assert not missing, f"documented attributes a fit does not set: {missing}"
