"""The programs of the five "Extending PyTorch" seed notes, run in ember, print what the notes show.

The notes live in ``shared/seeds`` beside the repository (or ``$EMBER_SEEDS_DIR``). Their code
is read from the notes at test time, never retyped, in three formats:

- Jupyter-export text (000, 003, 004): ``In [N]:`` starts a cell; the cell's
  printed output follows its code after a blank line.
- Markdown (001): code in ```` ``` python ```` fences; no output shown.
- reStructuredText (002): literal blocks, indented under a line ending in
  ``::``; no output shown.

Each program runs the way its note ran it: the cells of a note, in order, in
one namespace (a notebook's cells share state, and the blocks of 001 and 002
build on one another). The word ``torch`` becomes ``ember`` in the code and
in the expected text ("import ember as torch", nothing else changed). Each
cell's stdout is captured, and for notebook cells the repr of a bare last
expression is shown as Jupyter does (``torch.mean(d)`` shows ``0.4``).

``NOTES`` below is the table of every program and every line it checks. The
table holds the notes' output verbatim, and ``test_table_mirrors_the_note``
checks it against the notes, so the table cannot drift from them. The same
table also runs in torch 2.13 (``test_cell_in_torch``), which shows that the
extraction and the harness are right wherever ember fails.

No line is skipped for randomness: the notes print sizes, flags, gradcheck
verdicts and tensors built from ``arange``/``eye``, never ``randn`` values.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import importlib
import io
import os
import re
import textwrap
import traceback
import warnings
from pathlib import Path

import pytest

# the notes sit in shared/ beside the repository (as on the developers' machines and in CI)
SEEDS_DIR = Path(os.environ.get("EMBER_SEEDS_DIR", Path(__file__).resolve().parents[2] / "shared" / "seeds"))

if not SEEDS_DIR.is_dir():
    # The notes quote PyTorch's documentation, so they are not copied into this repository.
    pytest.skip(f"the seed notes are not at {SEEDS_DIR} (set EMBER_SEEDS_DIR)", allow_module_level=True)


# --------------------------------------------------------------------------- the table


@dataclasses.dataclass(frozen=True)
class Cell:
    """One cell (notebook) or code block (Markdown, rst) of a note, and what running it must show."""

    label: str  # "In [6]" for a notebook cell; "block 3" for the third code block of a .md/.rst note
    output: tuple[str, ...] = ()  # the lines the note shows after the cell, verbatim (torch names)
    raises: type[BaseException] | None = None  # the output's last line is this exception's "Type: message"
    message_prefix: bool = False  # compare only the start of the output (the rest is ember's extra diagnosis)
    warns: type[Warning] | None = None  # the one warning category the cell must emit
    why: str = ""  # where an expectation comes from when the note does not show it


@dataclasses.dataclass(frozen=True)
class Note:
    file: str
    format: str  # "notebook", "markdown" or "rst"
    cells: tuple[Cell, ...]
    prelude: str = ""  # the imports a note's code uses without showing them


NOTES = {
    "000": Note("000_c63f2f4082ead96e.txt", "notebook", (
        # The inputs come from randn, but the note prints only their sizes.
        Cell("In [23]", ("torch.Size([10, 4])", "torch.Size([3, 4])", "torch.Size([10, 3])")),
        Cell("In [25]", ("tensor([2.], grad_fn=<MulConstantBackward>) True",)),
    )),
    "001": Note("001_d74153228e2868c6.txt", "markdown", prelude=(
        "import torch\nfrom torch.autograd import Function\nimport torch.nn as nn"
    ), cells=(
        Cell("block 1"),  # class LinearFunction(Function)
        Cell("block 2"),  # linear = LinearFunction.apply
        Cell("block 3"),  # class MulConstant(Function)
        Cell("block 4", ("True",), why="the block's comment: gradcheck 'returns True if they all verify'"),
        Cell("block 5"),  # class Linear(nn.Module)
    )),
    "002": Note("002_41d3b3157e5af44c.txt", "rst", prelude=(
        "import torch\nfrom torch.autograd import Function, Variable\nimport torch.nn as nn"
    ), cells=(
        Cell("block 1"),  # the legacy class Linear(Function): forward(self, ...), self.save_for_backward
        Cell("block 2"),  # def linear(...): return Linear()(input, weight, bias)
        Cell("block 3", ("True",), warns=DeprecationWarning,
             why="the block's comment: gradcheck 'returns True if they all verify'; Linear() is legacy style"),
        Cell("block 4"),  # class Linear(nn.Module) without super().__init__(): defining it must work
    )),
    "003": Note("003_e1318de7ee8864dd.txt", "notebook", (
        Cell("In [1]"),  # LinearFunction with forward(input, weight, bias) + setup_context
        Cell("In [2]"),  # linear = LinearFunction.apply, then a wrapper function
        Cell("In [3]"),  # MulConstant with setup_context
        Cell("In [4]"),  # MulConstant with set_materialize_grads(False)
        Cell("In [5]"),  # MyCube returning (result, dx)
        Cell("In [6]", ("True",)),  # gradcheck on randn inputs: the verdict does not depend on the values
        Cell("In [7]"),  # LinearFunction with ctx in forward
        Cell("In [8]"),  # class Linear(nn.Module)
        Cell("In [9]"),  # ScalarTensor without __torch_function__
        Cell("In [10]", (
            "ScalarTensor(N=3, value=2)",
            "tensor([[2., 0., 0.],",
            "        [0., 2., 0.],",
            "        [0., 0., 2.]])",
        )),
        Cell("In [11]", ("TypeError: mean(): argument 'input' (position 1) must be Tensor, not ScalarTensor",),
             raises=TypeError),
        Cell("In [12]"),  # ScalarTensor with __torch_function__
        Cell("In [13]"),  # @implements(torch.mean)
        Cell("In [14]", ("0.4",)),  # a bare expression: the notebook shows its repr
        Cell("In [15]"),  # @implements(torch.add)
        Cell("In [16]", (
            "ScalarTensor(N=2, value=4)",
            "tensor([[3., 1.],",
            "        [1., 3.]])",
        )),
        Cell("In [17]", (
            "TypeError: no implementation found for 'torch.mul' on types that implement __torch_function__: "
            "[<class '__main__.ScalarTensor'>]",
        ), raises=TypeError),
        Cell("In [22]"),  # ScalarTensor falling back to .tensor() for unhandled functions
        Cell("In [23]", ("tensor([[4., 0.],", "        [0., 4.]])")),  # a bare expression again
    )),
    "004": Note("004_40725aade44db033.txt", "notebook", (
        Cell("In [1]"),  # imports
        Cell("In [2]"),  # LinearFunction that prints in forward and backward
        Cell("In [3]", (
            "tensor([[0., 1.],",
            "        [2., 3.]], dtype=torch.float64, requires_grad=True)",
            "tensor([[0., 1., 2.],",
            "        [3., 4., 5.]], dtype=torch.float64, requires_grad=True)",
            "FORWARD: output= tensor([[ 3.,  4.,  5.],",
            "        [ 9., 14., 19.]], dtype=torch.float64)",
            # torch 2.13 breaks this repr's lines differently; comparisons collapse whitespace.
            "output= tensor([[ 3.,  4.,  5.],",
            "        [ 9., 14., 19.]],",
            "       dtype=torch.float64, grad_fn=<LinearFunctionBackward>)",
            "BACKWARD: gard_output= tensor([[1., 1., 1.],",
            "        [1., 1., 1.]], dtype=torch.float64)",
            "BACKWARD: gard_input= tensor([[ 3., 12.],",
            "        [ 3., 12.]], dtype=torch.float64)",
            "BACKWARD: gard_weight= tensor([[2., 2., 2.],",
            "        [4., 4., 4.]], dtype=torch.float64)",
            "BACKWARD: gard_bias= None",
        )),
        Cell("In [4]", ("True",)),
        # ember's message goes on after the two matrices (a diagnosis of the mismatch), so only its start is compared.
        Cell("In [5]", (
            "RuntimeError: Jacobian mismatch for output 0 with respect to input 1,",
            "numerical:tensor([[0.0000, 0.0000, 0.0000, 2.0000, 0.0000, 0.0000],",
            "        [0.0000, 0.0000, 0.0000, 0.0000, 2.0000, 0.0000],",
            "        [0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 2.0000],",
            "        [1.0000, 0.0000, 0.0000, 3.0000, 0.0000, 0.0000],",
            "        [0.0000, 1.0000, 0.0000, 0.0000, 3.0000, 0.0000],",
            "        [0.0000, 0.0000, 1.0000, 0.0000, 0.0000, 3.0000]],",
            "       dtype=torch.float64)",
            "analytical:tensor([[0., 0., 0., 1., 0., 0.],",
            "        [0., 0., 0., 0., 1., 0.],",
            "        [0., 0., 0., 0., 0., 1.],",
            "        [2., 0., 0., 3., 0., 0.],",
            "        [0., 2., 0., 0., 3., 0.],",
            "        [0., 0., 2., 0., 0., 3.]], dtype=torch.float64)",
        ), raises=RuntimeError, message_prefix=True),
        Cell("In [6]", (
            "True",
            "output = tensor(7.3891, dtype=torch.float64, grad_fn=<ExpBackward>)",
            "tensor(7.3891, dtype=torch.float64)",
        )),
    )),
}

# Where torch 2.13 itself no longer does what a note shows; ember keeps the old behaviour on purpose.
TORCH_DIFFERS = {
    ("002", "block 3"): "torch 2.x refuses legacy Functions (non-static forward) with a RuntimeError",
    ("003", "In [17]"): "torch 2.13 words it 'Multiple dispatch failed for 'torch.mul'; all __torch_function__ "
                        "handlers returned NotImplemented: ...'",
}


# --------------------------------------------------------------------------- extraction


def rename_torch(text: str, library: str) -> str:
    """Replace the word ``torch`` (``import torch``, ``torch.mean``, ``dtype=torch.float64``) by ``library``.

    Whole words only: ``__torch_function__`` keeps its name in ember, and so do
    identifiers such as ``torch_function``.
    """
    return re.sub(r"\btorch\b", library, text)


def markdown_blocks(text: str) -> list[str]:
    """The contents of the ```` ``` python ```` fences, in order."""
    return re.findall(r"^``` ?python[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.M | re.S)


def rst_blocks(text: str) -> list[str]:
    """The literal blocks: the indented lines after a paragraph ending in ``::``, dedented."""
    lines = text.split("\n")
    blocks = []
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::"):
            continue
        indent = _indent(line)
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
            end += 1
        blocks.append(textwrap.dedent("\n".join(lines[i + 1:end])).strip("\n") + "\n")
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def notebook_cells(text: str) -> dict[str, str]:
    """Each ``In [N]:`` label and the text after it, up to the next cell: code, output, then prose."""
    parts = re.split(r"^(In \[\d+\]):[ \t]*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def split_notebook_cell(segment: str, first_output_line: str | None) -> tuple[str, str]:
    """Cut a cell's text into (code, shown output).

    The export does not mark where code ends and output starts, and output such
    as ``True`` is valid Python, so the table's first output line marks it
    (``test_table_mirrors_the_note`` checks the table's lines are the note's).
    The output runs to the next blank line. The code is then the longest run of
    whole paragraphs that compiles: this drops the prose that follows a cell.
    """
    lines = segment.strip("\n").split("\n")
    shown: list[str] = []
    if first_output_line is not None:
        starts = [i for i, line in enumerate(lines) if line.rstrip() == first_output_line]
        if not starts:
            raise ValueError(f"the note shows no line {first_output_line!r} in this cell:\n{segment}")
        lines, shown = lines[:starts[0]], _first_paragraph(lines[starts[0]:])
    return _longest_compiling_prefix(lines), "\n".join(line.rstrip() for line in shown)


def _first_paragraph(lines: list[str]) -> list[str]:
    blank = [i for i, line in enumerate(lines) if not line.strip()]
    return lines[:blank[0]] if blank else lines


def _longest_compiling_prefix(lines: list[str]) -> str:
    ends = [i for i in range(len(lines), 0, -1) if i == len(lines) or not lines[i].strip()]
    for end in ends:
        code = "\n".join(lines[:end]).strip("\n") + "\n"
        with contextlib.suppress(SyntaxError):
            compile(code, "<cell>", "exec")
            return code
    raise ValueError("no prefix of this cell compiles:\n" + "\n".join(lines))


@dataclasses.dataclass(frozen=True)
class Block:
    cell: Cell
    code: str
    shown: str  # what the note prints under the code ("" in Markdown and rst, which show no output)


def note_blocks(seed: str) -> list[Block]:
    """The note's code, one Block per table cell, in order."""
    note, text = NOTES[seed], read_note(seed)
    if note.format == "notebook":
        segments = notebook_cells(text)
        return [Block(cell, *split_notebook_cell(segments[cell.label], (cell.output or (None,))[0]))
                for cell in note.cells]
    return [Block(cell, code, "") for cell, code in zip(note.cells, script_blocks(seed), strict=True)]


def note_labels(seed: str) -> list[str]:
    """Every cell or block label the note has, found without the table."""
    if NOTES[seed].format == "notebook":
        return list(notebook_cells(read_note(seed)))
    return [f"block {i}" for i in range(1, len(script_blocks(seed)) + 1)]


def read_note(seed: str) -> str:
    return (SEEDS_DIR / NOTES[seed].file).read_text(encoding="utf-8")


def script_blocks(seed: str) -> list[str]:
    """The code blocks of a Markdown or rst note."""
    text = read_note(seed)
    return markdown_blocks(text) if NOTES[seed].format == "markdown" else rst_blocks(text)


# --------------------------------------------------------------------------- running


@dataclasses.dataclass
class Outcome:
    printed: str  # stdout, plus the repr a notebook shows for a bare last expression
    error: BaseException | None
    warnings: list[type[Warning]]


def run_cell(code: str, namespace: dict, filename: str, show_last_expression: bool) -> Outcome:
    """Execute one cell in ``namespace``, capturing what it prints, raises and warns."""
    tree = ast.parse(code, filename)
    last = None
    if show_last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    printed = io.StringIO()
    error = None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter("always")
        try:
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(last, filename, "eval"), namespace)
                if value is not None:  # Jupyter shows nothing for None
                    print(repr(value))
        except Exception as exc:  # a notebook goes on after a failing cell; so does this run
            error = exc
    return Outcome(printed.getvalue(), error, [w.category for w in caught])


@dataclasses.dataclass
class NoteRun:
    outcomes: dict[str, Outcome]  # by cell label, and "prelude"
    namespace: dict  # the names the note's code defined


@functools.cache
def run_note(seed: str, library: str) -> NoteRun:
    """Run the note's cells in order in one namespace, as its author did."""
    note = NOTES[seed]
    importlib.import_module(library).manual_seed(0)  # reproducible runs; no checked line depends on it
    namespace: dict = {"__name__": "__main__"}  # classes print as <class '__main__.ScalarTensor'>
    outcomes = {"prelude": run_cell(rename_torch(note.prelude, library), namespace, f"<{seed} prelude>", False)}
    for block in note_blocks(seed):
        filename = f"<seed {seed} {block.cell.label}>"
        outcomes[block.cell.label] = run_cell(
            rename_torch(block.code, library), namespace, filename, note.format == "notebook")
    return NoteRun(outcomes, namespace)


# --------------------------------------------------------------------------- checking


def squash(text: str) -> str:
    """Collapse runs of whitespace: torch 2.13 breaks long reprs at other places than the notes' torch."""
    return " ".join(text.split())


def is_the_expected_error(cell: Cell, error: BaseException) -> bool:
    """The note's exception type or a subclass (torch 2.13 and ember raise GradcheckError, a RuntimeError).

    NotImplementedError is a RuntimeError too, but no note expects a missing piece of ember.
    """
    return cell.raises is not None and isinstance(error, cell.raises) and not isinstance(error, NotImplementedError)


def observed_text(cell: Cell, outcome: Outcome) -> str:
    """What the cell printed, then the error as the note shows it: ``RuntimeError: message``."""
    text = outcome.printed
    if outcome.error is not None:
        text += f"{cell.raises.__name__}: {outcome.error}"
    return text


def check_cell(seed: str, cell: Cell, library: str) -> None:
    outcome = run_note(seed, library).outcomes[cell.label]
    if outcome.error is not None and not is_the_expected_error(cell, outcome.error):
        details = "".join(traceback.format_exception(outcome.error))
        pytest.fail(f"seed {seed} {cell.label} raised unexpectedly (printed {outcome.printed!r}):\n{details}")
    if cell.raises is not None:
        assert outcome.error is not None, f"seed {seed} {cell.label} should raise {cell.raises.__name__}"
    observed = squash(observed_text(cell, outcome))
    expected = squash(rename_torch("\n".join(cell.output), library))
    if cell.message_prefix:
        assert observed[:len(expected)] == expected
    else:
        assert observed == expected
    expected_warnings = {cell.warns} if cell.warns else set()
    assert set(outcome.warnings) == expected_warnings, f"warnings: {outcome.warnings}"


CELLS = [(seed, cell) for seed, note in NOTES.items() for cell in note.cells]


def _cell_id(param) -> str:
    return param.label.replace(" ", "") if isinstance(param, Cell) else f"seed{param}"


@pytest.mark.parametrize("seed", [seed for seed, note in NOTES.items() if note.prelude], ids=_cell_id)
def test_prelude_runs(seed):
    """The imports a note leaves implicit (``Function``, ``nn``, ``Variable``) exist in ember."""
    outcome = run_note(seed, "ember").outcomes["prelude"]
    assert outcome.error is None, f"{type(outcome.error).__name__}: {outcome.error}"


@pytest.mark.parametrize("seed, cell", CELLS, ids=_cell_id)
def test_cell_in_ember(seed, cell):
    """Run with ``torch`` renamed to ``ember``, the cell prints (or raises) what the note shows."""
    check_cell(seed, cell, "ember")


@pytest.mark.parametrize("seed, cell", [(s, c) for s, c in CELLS if (s, c.label) not in TORCH_DIFFERS], ids=_cell_id)
def test_cell_in_torch(seed, cell):
    """The oracle: torch runs the same extracted code to the same output, so the harness is right."""
    pytest.importorskip("torch")
    check_cell(seed, cell, "torch")


@pytest.mark.parametrize("seed", list(NOTES), ids=_cell_id)
def test_table_mirrors_the_note(seed):
    """The table names every cell of the note, and its output lines are the ones the note shows."""
    note = NOTES[seed]
    assert [cell.label for cell in note.cells] == note_labels(seed)
    for block in note_blocks(seed):
        if note.format == "notebook":
            assert block.shown == "\n".join(block.cell.output), block.cell.label
        else:  # Markdown and rst show no output: an expected line must say where it comes from
            assert not block.cell.output or block.cell.why, block.cell.label
        assert block.code.strip(), f"{block.cell.label} has no code"


# --------------------------------------------------------------------------- the notes' nn.Module classes

# The notes only define their ``Linear`` module. Using it (Linear(4, 3)) goes
# beyond what they show, so ember is compared with torch running the same class.
NOTE_MODULES = {
    "001": "Linear",  # works, but its extra_repr reads self.in_features, which does not exist
    "002": "Linear",  # forgets super().__init__(): assigning a Parameter must fail
    "003": "Linear",  # works, with nn.init.uniform_ and an extra_repr
}


def use_module(seed: str, library: str) -> list[str]:
    """Build the note's module as Linear(4, 3), then list what each use of it gives (or raises)."""
    lib = importlib.import_module(library)
    run = run_note(seed, library)
    module_class = run.namespace.get(NOTE_MODULES[seed])
    if module_class is None:
        return ["the note's code did not define the module"]
    seen: list[str] = []

    def record(step, use):
        try:
            seen.append(f"{step}: {use()}")
        except Exception as exc:
            seen.append(f"{step}: {type(exc).__name__}: {exc}")

    built: list = []
    record("build", lambda: built.append(module_class(4, 3)) or "ok")
    if not built:
        return seen
    module = built[0]
    record("parameters", lambda: [
        (name, tuple(p.shape), p.requires_grad, bool((p.abs() <= 0.1).all())) for name, p in module.named_parameters()
    ])
    record("forward", lambda: _forward_and_backward(module, lib))
    record("repr", lambda: repr(module))
    return seen


def _forward_and_backward(module, lib) -> tuple:
    output = module(lib.ones(2, 4))
    output.sum().backward()
    return tuple(output.shape), type(output.grad_fn).__name__, [tuple(p.grad.shape) for p in module.parameters()]


@pytest.mark.parametrize("seed", list(NOTE_MODULES), ids=_cell_id)
def test_note_module_behaves_as_in_torch(seed):
    pytest.importorskip("torch")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings, if any, are checked per cell above
        observed, expected = use_module(seed, "ember"), use_module(seed, "torch")
    assert observed == [rename_torch(line, "ember") for line in expected]


# --------------------------------------------------------------------------- the extractors and the harness


def test_rst_literal_block_ends_at_the_first_line_that_is_not_indented():
    text = "Prose::\n\n    a = 1\n   \n    if a:\n        b = 2\n\nMore prose.\n  Indented prose, no block.\n"
    assert rst_blocks(text) == ["a = 1\n\nif a:\n    b = 2\n"]


def test_markdown_blocks_are_the_python_fences_only():
    text = "x\n``` python\na = 1\n```\n```\nnot python\n```\n```python\nb = 2\n```\n"
    assert markdown_blocks(text) == ["a = 1\n", "b = 2\n"]


def test_notebook_cell_splits_into_code_output_and_prose():
    segment = "\nx = 1\n\nprint(x)\n\n1\n\n\n## Prose: not code\nmore prose\n"
    assert split_notebook_cell(segment, "1") == ("x = 1\n\nprint(x)\n", "1")
    assert split_notebook_cell("\ny = 2\n\n**Prose** here\n", None) == ("y = 2\n", "")


@pytest.mark.parametrize("code, shown", [
    ("1 + 1", "2\n"),  # a bare last expression shows its repr
    ("'a'", "'a'\n"),  # repr, not str
    ("None", ""),  # None shows nothing
    ("x = 3", ""),  # a statement shows nothing
    ("print(4)\nx = 5", "4\n"),
])
def test_a_notebook_cell_shows_its_last_expression(code, shown):
    assert run_cell(code, {}, "<test>", show_last_expression=True).printed == shown


def test_a_script_block_shows_nothing_but_what_it_prints():
    assert run_cell("1 + 1", {}, "<test>", show_last_expression=False).printed == ""


def test_the_rename_keeps_the_protocol_name():
    code = "import torch\ndef __torch_function__(torch_function): return torch.mean"
    assert rename_torch(code, "ember") == "import ember\ndef __torch_function__(torch_function): return ember.mean"
