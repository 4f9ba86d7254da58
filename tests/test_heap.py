"""The heap's carriers, one matrix: which constructs carry a tensor from where it is put to where
it is read (analysis/heap.py).

Each carrier is a template that puts a value into something and reads it back. Every program is
run twice: with a model output (`.numpy()` on what is read raises, and must be flagged DET101)
and with its detached twin (runs, and must not be flagged). The programs are executed too, so the
matrix's claims about run time are checked, not assumed. Carriers the walk does not follow yet are
marked `xfail(strict=True)`: the day one starts to carry, its mark must go.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from flake8_detach import check_source

PRELUDE = "import collections\nimport dataclasses\nimport itertools\nimport typing\n\nimport torch\n\nnet = torch.nn.Linear(2, 1)\nx = torch.ones(2)\n"
FLAGGED = "net(x)"
DETACHED = "net(x).detach()"

# A carrier: (value expression, a suffix for its names) -> (lines that put it in, expression reading it back).
Carrier = Callable[[str, str], tuple[str, str]]


def _lines(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


CARRIERS: dict[str, Carrier] = {
    "list_append": lambda v, k: (f"xs{k} = []\nxs{k}.append({v})\n", f"xs{k}[0]"),
    "list_insert": lambda v, k: (f"xs{k} = []\nxs{k}.insert(0, {v})\n", f"xs{k}[0]"),
    "list_extend": lambda v, k: (f"xs{k} = []\nxs{k}.extend([{v}])\n", f"xs{k}[0]"),
    "list_iadd": lambda v, k: (f"xs{k} = []\nxs{k} += [{v}]\n", f"xs{k}[0]"),
    "set_add": lambda v, k: (f"s{k} = set()\ns{k}.add({v})\n", f"next(iter(s{k}))"),
    "dict_item": lambda v, k: (f"d{k} = {{}}\nd{k}['a'] = {v}\n", f"d{k}['a']"),
    "random_choice": lambda v, k: (f"import random\npool{k} = [{v}]\npick{k} = random.choice(pool{k})\n", f"pick{k}"),
    "random_sample": lambda v, k: (f"import random\npool{k} = [{v}]\npicks{k} = random.sample(pool{k}, 1)\n", f"picks{k}[0]"),
    "dict_of_lists": lambda v, k: (f"d{k} = {{'a': []}}\nd{k}['a'].append({v})\n", f"d{k}['a'][0]"),
    "dict_setdefault": lambda v, k: (f"d{k} = {{}}\nd{k}.setdefault('a', []).append({v})\n", f"d{k}['a'][0]"),
    "dict_update": lambda v, k: (f"d{k} = {{}}\nd{k}.update(a={v})\n", f"d{k}['a']"),
    "attribute_list": lambda v, k: (_lines(f"""
        class Log{k}:
            def __init__(self):
                self.items = []

            def add(self, t):
                self.items.append(t)

            def first(self):
                return self.items[0]


        log{k} = Log{k}()
        log{k}.add({v})
        """), f"log{k}.first()"),
    "instance_field": lambda v, k: (_lines(f"""
        class Box{k}:
            pass


        box{k} = Box{k}()
        box{k}.t = {v}
        """), f"box{k}.t"),
    "generator": lambda v, k: (f"def gen{k}():\n    yield {v}\n\n\n", f"next(gen{k}())"),
    "yield_from": lambda v, k: (f"def gen{k}():\n    yield from [{v}]\n\n\n", f"next(gen{k}())"),
    "zip": lambda v, k: (f"pairs{k} = list(zip([{v}], [0]))\n", f"pairs{k}[0][0]"),
    "enumerate": lambda v, k: (f"pairs{k} = list(enumerate([{v}]))\n", f"pairs{k}[0][1]"),
    "map": lambda v, k: (f"def same{k}(t):\n    return t\n\n\nmapped{k} = list(map(same{k}, [{v}]))\n",
                         f"mapped{k}[0]"),
    "filter": lambda v, k: (f"kept{k} = list(filter(None, [{v}]))\n", f"kept{k}[0]"),
    "sorted": lambda v, k: (f"ordered{k} = sorted([{v}], key=id)\n", f"ordered{k}[0]"),
    "reversed": lambda v, k: (f"back{k} = list(reversed([{v}]))\n", f"back{k}[0]"),
    "itertools_chain": lambda v, k: (f"chained{k} = list(itertools.chain([{v}], []))\n", f"chained{k}[0]"),
    "list_copy": lambda v, k: (f"src{k} = []\ncopy{k} = list(src{k})\nsrc{k}.append({v})\ncopy{k}.append(src{k}[0])\n",
                               f"copy{k}[0]"),
    "tuple_copy": lambda v, k: (f"src{k} = [{v}]\nfrozen{k} = tuple(src{k})\n", f"frozen{k}[0]"),
    "star_args": lambda v, k: (f"def pick{k}(*args):\n    return args[0]\n\n\n", f"pick{k}({v})"),
    "star_kwargs": lambda v, k: (f"def pick{k}(**kwargs):\n    return kwargs['a']\n\n\n", f"pick{k}(a={v})"),
    "closure": lambda v, k: (f"store{k} = []\n\n\ndef fill{k}():\n    store{k}.append({v})\n\n\nfill{k}()\n",
                             f"store{k}[0]"),
    "lambda_capture": lambda v, k: (f"store{k} = [{v}]\nget{k} = lambda: store{k}[0]\n", f"get{k}()"),
    "class_attribute": lambda v, k: (f"class Registry{k}:\n    items = []\n\n\nRegistry{k}.items.append({v})\n",
                                     f"Registry{k}.items[0]"),
    "super": lambda v, k: (_lines(f"""
        class Base{k}:
            def __init__(self, t):
                self.t = t


        class Child{k}(Base{k}):
            def __init__(self, t):
                super().__init__(t)


        child{k} = Child{k}({v})
        """), f"child{k}.t"),
    "property_setter": lambda v, k: (_lines(f"""
        class Holder{k}:
            def __init__(self):
                self._t = None

            @property
            def t(self):
                return self._t

            @t.setter
            def t(self, value):
                self._t = value


        holder{k} = Holder{k}()
        holder{k}.t = {v}
        """), f"holder{k}.t"),
    "call_dunder": lambda v, k: (_lines(f"""
        class Scale{k}:
            def __call__(self, t):
                return t * 1


        scale{k} = Scale{k}()
        """), f"scale{k}({v})"),
    "module_forward": lambda v, k: (_lines(f"""
        class Keep{k}(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.kept = []

            def forward(self, t):
                self.kept.append(t)
                return t


        keep{k} = Keep{k}()
        keep{k}({v})
        """), f"keep{k}.kept[0]"),
    "getitem_method": lambda v, k: (_lines(f"""
        class Shelf{k}:
            def __init__(self, t):
                self.items = [t]

            def __getitem__(self, index):
                return self.items[index]


        shelf{k} = Shelf{k}({v})
        """), f"shelf{k}[0]"),
    "iter_method": lambda v, k: (_lines(f"""
        class Stream{k}:
            def __init__(self, t):
                self.t = t

            def __iter__(self):
                yield self.t


        stream{k} = Stream{k}({v})
        """), f"next(iter([item for item in stream{k}]))"),
    "static_method": lambda v, k: (f"class Ops{k}:\n    @staticmethod\n    def same(t):\n        return t\n\n\n",
                                   f"Ops{k}.same({v})"),
    "class_method": lambda v, k: (f"class Ops{k}:\n    @classmethod\n    def same(cls, t):\n        return t\n\n\n",
                                  f"Ops{k}.same({v})"),
    "deque_popleft": lambda v, k: (f"queue{k} = collections.deque()\nqueue{k}.append({v})\n", f"queue{k}.popleft()"),
    "chain_from_iterable": lambda v, k: (f"flat{k} = list(itertools.chain.from_iterable([[{v}]]))\n", f"flat{k}[0]"),
    "global_write": lambda v, k: (_lines(f"""
        kept{k} = None


        def keep{k}():
            global kept{k}
            kept{k} = {v}


        keep{k}()
        """), f"kept{k}"),
    # Constructs real code uses; `setattr_getattr` is not carried yet (NOT_CARRIED below).
    "functools_partial": lambda v, k: ((f"import functools\n\n\ndef times{k}(t, factor):\n    return t * factor\n\n\n"
                                       f"double{k} = functools.partial(times{k}, factor=2)\n"), f"double{k}({v})"),
    "lambda_in_dict": lambda v, k: (f"ops{k} = {{'same': lambda t: t}}\n", f"ops{k}['same']({v})"),
    "defaultdict_list": lambda v, k: (f"d{k} = collections.defaultdict(list)\nd{k}['a'].append({v})\n",
                                      f"d{k}['a'][0]"),
    "dict_rewritten": lambda v, k: (f"d{k} = {{'a': 0}}\nfor key{k} in d{k}:\n    d{k}[key{k}] = {v}\n", f"d{k}['a']"),
    "namedtuple_unpack": lambda v, k: (f"Pair{k} = collections.namedtuple('Pair{k}', 'a b')\nfirst{k}, _ = Pair{k}({v}, 0)\n",
                                       f"first{k}"),
    "nonlocal_write": lambda v, k: (_lines(f"""
        def outer{k}():
            kept = None

            def keep():
                nonlocal kept
                kept = {v}

            keep()
            return kept


        """), f"outer{k}()"),
    "setattr_getattr": lambda v, k: (f"class Slot{k}:\n    pass\n\n\nslot{k} = Slot{k}()\nsetattr(slot{k}, 't', {v})\n",
                                     f"getattr(slot{k}, 't')"),
    "contextmanager_yield": lambda v, k: (_lines(f"""
        import contextlib


        @contextlib.contextmanager
        def opened{k}():
            yield {v}


        with opened{k}() as held{k}:
            pass
        """), f"held{k}"),
    "dataclass": lambda v, k: (f"@dataclasses.dataclass\nclass Record{k}:\n    t: object\n\n\n",
                               f"Record{k}({v}).t"),
    "typed_namedtuple": lambda v, k: (f"class Pair{k}(typing.NamedTuple):\n    t: object\n\n\n", f"Pair{k}({v}).t"),
    "namedtuple": lambda v, k: (f"Pair{k} = collections.namedtuple('Pair{k}', 't')\n", f"Pair{k}({v}).t"),
}

# What the walk does not carry yet (each strict: it fails the day it starts to carry).
NOT_CARRIED: frozenset[str] = frozenset()


def program(value: str, carriers: list[str]) -> str:
    """The prelude, the carriers nested (the first puts `value` in, each next one carries the
    previous one's read-back), and a last line converting what the last one reads."""
    body = ""
    read = value
    for index, name in enumerate(carriers):
        lines, read = CARRIERS[name](read, str(index))
        body += lines
    return PRELUDE + body + f"print(({read}).numpy())\n"


def flagged_lines(source: str) -> set[int]:
    return {d.line for d in check_source(source) if d.code == "DET101"}


def runs_cleanly(source: str) -> bool:
    try:
        exec(compile(source, "<heap matrix>", "exec"), {"__name__": "__main__"})  # noqa: S102
    except RuntimeError:
        return False
    return True


def _cases(combinations: list[list[str]]) -> list[object]:
    return [pytest.param(names, id="+".join(names), marks=[pytest.mark.xfail(strict=True, reason="not carried yet")]
                         if NOT_CARRIED.intersection(names) else []) for names in combinations]


SINGLE = [[name] for name in CARRIERS]
# Each carrier inside two containers that the walk must see through: a generator's values and
# a dict of lists (the value goes into the carrier first, then through the outer one).
NESTED = [[name, outer] for outer in ("generator", "dict_of_lists") for name in CARRIERS if name != outer]


@pytest.mark.parametrize("carriers", _cases(SINGLE + NESTED))
def test_a_model_output_through_the_carriers_is_flagged(carriers: list[str]) -> None:
    source = program(FLAGGED, carriers)
    assert not runs_cleanly(source)  # the hazard is real: `.numpy()` raises
    assert flagged_lines(source) == {source.count("\n")}


@pytest.mark.parametrize("carriers", [pytest.param(names, id="+".join(names)) for names in SINGLE + NESTED])
def test_its_detached_twin_runs_and_is_not_flagged(carriers: list[str]) -> None:
    source = program(DETACHED, carriers)
    assert runs_cleanly(source)
    assert flagged_lines(source) == set()


def test_a_dict_keeps_its_keys_apart() -> None:
    source = PRELUDE + "d = {'loss': [], 'out': []}\nd['loss'].append(net(x).item())\nd['out'].append(net(x))\n"
    assert flagged_lines(source + "print(torch.tensor(d['loss']).numpy())\n") == set()
    assert flagged_lines(source + "print(d['out'][0].numpy())\n") == {13}


def test_a_list_filled_by_a_method_analysed_later_is_seen_full() -> None:
    """Flow-insensitive per object: `show` is analysed before `fill`, and still sees the output."""
    source = PRELUDE + _lines("""
        class Learner:
            def __init__(self):
                self.log = []

            def show(self):
                return self.log[0].numpy()

            def fill(self):
                self.log.append(net(x))
        """)
    assert flagged_lines(source) == {15}


def test_under_no_grad_the_generator_yields_no_grad_values() -> None:
    source = PRELUDE + "def gen():\n    with torch.no_grad():\n        yield net(x)\n\n\nfor out in gen():\n    out.numpy()\n"
    assert runs_cleanly(source)
    assert flagged_lines(source) == set()


def test_a_generator_method_yields_what_its_call_passes() -> None:
    """Like a return value: a yielded parameter is what the call passes, not of unknown origin."""
    source = PRELUDE + "class A:\n    def gen(self, t):\n        yield t\n\n\nfor out in A().gen({}):\n    out.numpy()\n"
    assert runs_cleanly(source.format("torch.ones(2)"))
    assert flagged_lines(source.format("torch.ones(2)")) == set()
    assert flagged_lines(source.format("net(x)")) == {16}


# The function forms of views (analysis/aliases.py): a write through the result changes the
# array the tensor came from. Each is run too, so the claim that the storage is shared is checked.
TORCH_VIEW_CALLS = [
    "torch.permute(torch.from_numpy(a), (1, 0))", "torch.transpose(torch.from_numpy(a), 0, 1)",
    "torch.swapaxes(torch.from_numpy(a), 0, 1)", "torch.swapdims(torch.from_numpy(a), 0, 1)",
    "torch.movedim(torch.from_numpy(a), 0, 1)", "torch.moveaxis(torch.from_numpy(a), 0, 1)",
    "torch.squeeze(torch.from_numpy(a))", "torch.unsqueeze(torch.from_numpy(a), 0)",
    "torch.narrow(torch.from_numpy(a), 0, 0, 1)", "torch.as_strided(torch.from_numpy(a), (2,), (1,))",
    "torch.select(torch.from_numpy(a), 0, 0)", "torch.diagonal(torch.from_numpy(a))",
    "torch.t(torch.from_numpy(a))", "torch.detach(torch.from_numpy(a))",
    "torch.reshape(torch.from_numpy(a), (-1,))", "torch.flatten(torch.from_numpy(a))",
]
NUMPY_VIEW_CALLS = [
    "np.transpose(t.numpy())", "np.squeeze(t.numpy())", "np.expand_dims(t.numpy(), 0)",
    "np.moveaxis(t.numpy(), 0, 1)", "np.swapaxes(t.numpy(), 0, 1)", "np.reshape(t.numpy(), (-1,))",
    "np.ravel(t.numpy())",
]
# Copies that look alike: `reshape`/`flatten` of a permuted tensor (checked on torch 2.13).
COPYING_CALLS = [
    "torch.reshape(torch.permute(torch.from_numpy(a), (1, 0)), (-1,))",
    "torch.flatten(torch.transpose(torch.from_numpy(a), 0, 1))",
    "np.reshape(np.transpose(t.numpy()), (-1,))",
]
VIEW_PRELUDE = "import numpy as np\nimport torch\n\na = np.ones((2, 3))\nt = torch.ones(2, 3)\n"


def _view_program(call: str) -> str:
    return VIEW_PRELUDE + f"view = {call}\nview += 1\nprint(a, t)\n"


def _shares(call: str) -> bool:
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(_view_program(call), "<view>", "exec"), namespace)  # noqa: S102
    a, t = namespace["a"], namespace["t"]
    return bool((a != 1).any()) or bool((t != 1).any())  # type: ignore[operator, union-attr]


@pytest.mark.parametrize("call", TORCH_VIEW_CALLS + NUMPY_VIEW_CALLS)
def test_a_write_through_the_function_form_of_a_view_is_flagged(call: str) -> None:
    assert _shares(call)
    assert {(d.line, d.code) for d in check_source(_view_program(call))} == {(7, "DET105")}


@pytest.mark.parametrize("call", COPYING_CALLS)
def test_a_copying_look_alike_is_not(call: str) -> None:
    assert not _shares(call)
    assert check_source(_view_program(call)) == []


def test_an_optimizer_subclass_holds_its_parameters_in_param_groups() -> None:
    """A3C's SharedAdam: `self.param_groups` of a torch.optim subclass are dicts whose "params" are
    the parameters it was given; their other keys are numbers."""
    source = _lines("""
        import torch


        class Shared(torch.optim.Adam):
            def __init__(self, params):
                super().__init__(params)
                for group in self.param_groups:
                    print(group["lr"] * 2, [group["betas"]])
                    for p in group["params"]:
                        self.state[p]["avg"] = p.data.new().resize_as_(p.data).zero_()


        Shared(torch.nn.Linear(2, 1).parameters())
    """)
    exec(compile(source, "<shared>", "exec"), {})  # noqa: S102 - it runs: the claim is the attribute, not a crash
    assert {(d.line, d.code) for d in check_source(source)} == {(10, "DET103")}
