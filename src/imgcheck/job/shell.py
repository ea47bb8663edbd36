"""What a shell script statically says: its commands with variables and arrays expanded where the script alone
decides them, and a marked unknown word where it does not.

Parsed with tree-sitter-bash (a real bash grammar: arrays, `[[ ]]`, `$(( ))`, here-docs); bashlex, the other
bash parser on PyPI, raises on `declare -a ARGS=(...)`, which is the very thing sbatch scripts use.

What is known: `NAME=value`, `export NAME=value`, `declare [-a] NAME=(...)`, `NAME+=(...)` and `: "${NAME:=d}"`
at the top level of the script, in order. What is not: anything set inside `if`/`for`/`while`/`case`/functions
(it depends on a run-time condition), command and arithmetic substitutions, variables the script never sets
(the submitting shell's, Slurm's), and expansion operators other than `:-`/`:=`/`-`/`=`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from ..errors import BadInputError

_PARSER = Parser(Language(tree_sitter_bash.language()))
# Nodes below which an assignment happens only on some runs
_CONDITIONAL = {
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "c_style_for_statement",
    "while_statement",
    "case_statement",
    "case_item",
    "function_definition",
    "subshell",
    "list",  # `a && B=1`: B is set only when a succeeds
    "pipeline",
}


@dataclass(frozen=True)
class Unknown:
    """A word the script does not decide: its source text and why."""

    text: str
    why: str
    many: bool = False  # an array or unquoted expansion: may stand for any number of words (flags)

    def __str__(self) -> str:
        return self.text


Word = str | Unknown


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line the command starts on
    words: tuple[Word, ...]  # the command name first
    end_line: int | None = None  # the line it ends on


@dataclass
class Script:
    commands: list[Command] = field(default_factory=list)
    # variables the script exports with a value it decides (NAME -> (value or None when not decided, line))
    exports: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class _Vars:
    def __init__(self) -> None:
        self.values: dict[str, list[Word] | Unknown] = {}

    def set(self, name: str, value: list[Word] | Unknown) -> None:
        self.values[name] = value

    def get(self, name: str) -> list[Word] | Unknown | None:
        return self.values.get(name)


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def parse_script(text: str, where: str = "the script") -> Script:
    """The script's commands in source order, each with its words expanded as far as the script decides.
    A script nested deeper than Python's recursion allows is bad input (one line), not a traceback."""
    src = text.encode("utf-8")
    tree = _PARSER.parse(src)
    out = Script()
    try:
        _walk(tree.root_node, src, _Vars(), out, conditional=False)
    except RecursionError:
        raise BadInputError(f"{where}: shell constructs nested too deeply to read") from None
    return out


def _walk(node: Node, src: bytes, env: _Vars, out: Script, conditional: bool) -> None:
    for child in node.named_children:
        kind = child.type
        if kind == "command":
            _command(child, src, env, out, conditional)
        elif kind == "variable_assignment":
            _assign(child, src, env, conditional, out)
        elif kind == "declaration_command":
            _declare(child, src, env, out, conditional)
        elif kind in ("comment", "heredoc_body"):
            continue
        else:
            _walk(child, src, env, out, conditional or kind in _CONDITIONAL)


def _declare(node: Node, src: bytes, env: _Vars, out: Script, conditional: bool) -> None:
    keyword = _text(src, node.children[0]) if node.children else ""
    for child in node.named_children:
        if child.type == "variable_assignment":
            name = _assign(child, src, env, conditional, out)
            if keyword == "export" and name is not None:
                value = env.get(name)
                known = value[0] if isinstance(value, list) and len(value) == 1 else None
                out.exports[name] = (known if isinstance(known, str) else None, child.start_point[0] + 1)
        elif child.type == "variable_name" and keyword == "export":
            name = _text(src, child)
            value = env.get(name)
            known = value[0] if isinstance(value, list) and len(value) == 1 else None
            out.exports[name] = (known if isinstance(known, str) else None, child.start_point[0] + 1)


def _assign(node: Node, src: bytes, env: _Vars, conditional: bool, out: Script) -> str | None:
    name_node = node.child_by_field_name("name")
    value_node = node.child_by_field_name("value")
    if name_node is None:
        return None
    name = _text(src, name_node)
    if name_node.type != "variable_name" or not name.isidentifier():
        return None  # ARR[3]=x: an element, leave the array as it is; --flag=x: not an assignment in bash
    line = node.start_point[0] + 1
    appending = any(c.type == "+=" for c in node.children)
    if conditional:
        env.set(name, Unknown(f"${name}", f"{name} is set under a condition (line {line})", many=True))
        return name
    if value_node is None:
        value: list[Word] | Unknown = [""]
    elif value_node.type == "array":
        value = []
        for element in value_node.named_children:
            value.extend(_expand(element, src, env, split=True))
    else:
        value = [_join(_expand(value_node, src, env, split=False), f"${name}")]
    if appending:
        before = env.get(name)
        if isinstance(before, Unknown):
            value = before
        elif before is not None and isinstance(value, list):
            if value_node is not None and value_node.type == "array":
                value = before + value  # ARR+=(more)
            else:  # S+=more appends to the string (the first element of an array)
                first, added = (before[0] if before else ""), value[0]
                joined = first + added if isinstance(first, str) and isinstance(added, str) else None
                value = [joined if joined is not None else Unknown(f"${name}", f"{name} is appended a run-time value")]
                value += before[1:]
    env.set(name, value)
    return name


def _join(words: list[Word], name: str) -> Word:
    if all(isinstance(w, str) for w in words):
        return "".join(w for w in words if isinstance(w, str))
    why = next(w.why for w in words if isinstance(w, Unknown))
    return Unknown(name, why)


def _command(node: Node, src: bytes, env: _Vars, out: Script, conditional: bool) -> None:
    words: list[Word] = []
    previous: Node | None = None
    for child in node.named_children:
        if child.type == "variable_assignment":
            name = child.child_by_field_name("name")
            if name is not None and _text(src, name).isidentifier():
                continue  # NAME=value cmd: the variable is for that command only
            words.append(_unescape(_text(src, child)))  # --device=/dev/x at the start: bash runs it as a word
            continue
        if child.type == "command_name":
            words.extend(_expand(child.named_children[0] if child.named_children else child, src, env, True))
        elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            continue
        elif previous is not None and child.start_byte == previous.end_byte and words:
            # no blank between them: one shell word the grammar split (a=b,`pwd`:`pwd`)
            start = words.pop()
            more = _expand(child, src, env, split=False)
            if isinstance(start, str) and len(more) == 1 and isinstance(more[0], str):
                words.append(start + more[0])
            else:
                text = (start.text if isinstance(start, Unknown) else start) + _text(src, child)
                why = next((w.why for w in [start, *more] if isinstance(w, Unknown)), "an expansion of many words")
                words.append(Unknown(text, why))
        else:
            words.extend(_expand(child, src, env, split=True))
        previous = child
    if words and words[0] == ":":
        for child in node.named_children[1:]:
            _default_assignment(child, src, env, conditional)
    out.commands.append(Command(node.start_point[0] + 1, tuple(words), node.end_point[0] + 1))


def _default_assignment(node: Node, src: bytes, env: _Vars, conditional: bool) -> None:
    """`: "${NAME:=default}"`: NAME keeps the submitting shell's value, else takes the default."""
    for exp in _find(node, "expansion"):
        text = _text(src, exp)[2:-1]
        for op in (":=", "="):
            name, sep, default = text.partition(op)
            if sep and name.isidentifier():
                if env.get(name) is None and not conditional:
                    value = _join(_expand_text(default, src, env, exp), f"${name}")
                    shown = value if isinstance(value, str) else f"{default} ({value.why})"
                    env.set(
                        name, Unknown(f"${name}", f"{name} defaults to {shown} unless the submitting shell sets it")
                    )
                break


def _expand_text(default: str, src: bytes, env: _Vars, exp: Node) -> list[Word]:
    # the default's own expansions are child nodes of `exp`; reuse them
    parts: list[Word] = []
    for child in exp.named_children[1:]:
        parts.extend(_expand(child, src, env, split=False))
    return parts or [default]


def _find(node: Node, kind: str) -> Iterator[Node]:
    if node.type == kind:
        yield node
    for child in node.named_children:
        yield from _find(child, kind)


def _expand(node: Node, src: bytes, env: _Vars, split: bool) -> list[Word]:
    """The words `node` stands for; `split`: unquoted, so a variable's value splits on blanks."""
    kind = node.type
    text = _text(src, node)
    if kind in ("word", "number"):
        return [_unescape(text)]
    if kind == "raw_string":
        return [text[1:-1]]
    if kind == "ansi_c_string":
        return [Unknown(text, "an ANSI-C string")]
    if kind == "string":
        return _string(node, src, env)
    if kind == "concatenation":
        parts: list[list[Word]] = [_expand(c, src, env, split=False) for c in node.named_children]
        if all(len(p) == 1 and isinstance(p[0], str) for p in parts):
            return ["".join(p[0] for p in parts if isinstance(p[0], str))]
        why = next((w.why for p in parts for w in p if isinstance(w, Unknown)), "an expansion of many words")
        return [Unknown(text, why)]
    if kind in ("simple_expansion", "expansion"):
        return _variable(node, src, env, split)
    if kind in ("command_substitution", "process_substitution"):
        return [Unknown(text, "a command substitution is known only when the script runs", many=split)]
    if kind == "arithmetic_expansion":
        return [Unknown(text, "an arithmetic expansion of run-time values")]
    return [Unknown(text, f"a shell {kind.replace('_', ' ')}")]


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _string(node: Node, src: bytes, env: _Vars) -> list[Word]:
    """A double-quoted string: one word, except "${ARR[@]}", which is one word per element."""
    inner = [c for c in node.named_children]
    if len(inner) == 1 and inner[0].type == "expansion" and _is_all_elements(inner[0], src):
        return _variable(inner[0], src, env, split=False)
    if len(inner) == 1 and inner[0].type == "simple_expansion" and _text(src, inner[0]) in ("$@", "$*"):
        return _variable(inner[0], src, env, split=False)  # "$@": one word per argument
    pieces: list[Word] = []
    for child in inner:
        if child.type == "string_content":
            pieces.append(_text(src, child).replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\"))
        else:
            pieces.extend(_expand(child, src, env, split=False))
    if not inner:
        return [""]
    if all(isinstance(p, str) for p in pieces):
        return ["".join(p for p in pieces if isinstance(p, str))]
    why = next(p.why for p in pieces if isinstance(p, Unknown))
    return [Unknown(_text(src, node), why)]


def _is_all_elements(node: Node, src: bytes) -> bool:
    text = _text(src, node)
    return text.endswith(("[@]}", "[*]}"))


def _variable(node: Node, src: bytes, env: _Vars, split: bool) -> list[Word]:
    text = _text(src, node)
    body = text[2:-1] if text.startswith("${") else text[1:]
    all_elements = body.endswith(("[@]", "[*]"))
    name = body[:-3] if all_elements else body
    default = None
    for op in (":-", ":=", "-", "="):
        if op in name and name.partition(op)[0].isidentifier():
            name, _, default = name.partition(op)
            break
    many = split or all_elements or name in ("@", "*")  # "$@" is one word per argument
    if not name.isidentifier():
        return [Unknown(text, f"the expansion {text} is not followed statically", many=many)]
    value = env.get(name)
    if value is None:
        if default is not None and "$" not in default:
            return [Unknown(text, f"{name} is {default} unless the submitting shell sets it")]
        return [Unknown(text, f"{name} is not set by the script (the submitting shell or Slurm sets it)", many)]
    if isinstance(value, Unknown):
        return [Unknown(text, value.why, many=many or value.many)]
    if all_elements:
        if any(isinstance(v, Unknown) and v.many and _arbitrary(v.text) for v in value):
            why = next(v.why for v in value if isinstance(v, Unknown))
            return [Unknown(text, why, many=True)]
        return list(value)
    first = value[0] if value else ""
    if split and isinstance(first, str):
        return list(first.split())
    return [first]


def _arbitrary(text: str) -> bool:
    """An expansion to any number of words: an array's elements or the script's arguments."""
    return any(mark in text for mark in ("[@]", "[*]", "$@", "$*"))


def is_open(word: Word) -> bool:
    """A word that may stand for any number of words at run time (an unknown array or unquoted variable)."""
    return isinstance(word, Unknown) and word.many
