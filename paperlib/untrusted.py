"""Bounded handling of what users hand in: YAML with a cap on alias expansion, and short,
single-line renderings of values and errors for messages.

A YAML file is small, but its anchors and aliases can make the structure they describe
exponentially large (nine lists of nine aliases, eight levels deep: under 400 bytes, 9⁹
strings).
:func:`load_yaml` composes the document, counts the nodes it would have with every alias
expanded (each shared node counted once per use, without expanding it) and refuses more than
``max_nodes`` before any Python object is built. :func:`brief` renders a value for an error
message without walking all of it (``reprlib``), and :func:`error_text` turns an exception into
one line of bounded length for a command's stderr. A mapping that repeats a key is refused
(naming the key, its lines and the source) rather than letting the last value win.
"""

from __future__ import annotations

import reprlib
from typing import Any

import yaml

__all__ = [
    "MAX_MESSAGE",
    "MAX_YAML_NODES",
    "YamlError",
    "brief",
    "error_text",
    "load_yaml",
    "unique_keys",
]

MAX_YAML_NODES = 100_000  # expanded nodes: a training config has about a hundred
MAX_MESSAGE = 1000  # characters of an error shown on a command line

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 80
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 8
_REPR.maxlevel = 3


class YamlError(ValueError):
    """A YAML text that does not parse, repeats a key, or whose aliases expand past the cap;
    the message starts with where the text came from."""


def _repeated_key(node: yaml.MappingNode) -> tuple[str, int, int] | None:
    """The first key of ``node`` written twice: (key, first line, repeated line), 1-based."""
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line, written = key.start_mark.line + 1, (key.tag, key.value)
        if written in seen:
            return key.value, seen[written], line
        seen[written] = line
    return None


def _refuse_repeated_keys(root: yaml.Node, source: str) -> None:
    """YamlError naming ``source``, the key and both its lines when a mapping of ``root``
    repeats a key (walked once per node, aliases not re-entered)."""
    stack, visited = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            repeated = _repeated_key(node)
            if repeated is not None:
                key, first, again = repeated
                raise YamlError(
                    f"{source}: the key {brief(key, 60)} is written twice (lines {first} and "
                    f"{again}); expected each key once"
                )
        stack.extend(_children(node))


def brief(value: Any, limit: int = 120) -> str:
    """A repr of ``value`` of at most ``limit`` characters (nested values elided, ``...``)."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _expanded_nodes(root: yaml.Node, limit: int, source: str) -> int:
    """Nodes of ``root`` with every alias expanded (memoised per shared node); YamlError when
    the count passes ``limit`` or an alias refers to a node that contains it."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > limit:
                raise YamlError(
                    f"{source}: its aliases expand to more than {limit} nodes (an alias "
                    "bomb?); expected a plain configuration"
                )
            continue
        if key in open_nodes:
            raise YamlError(f"{source}: a recursive alias (a node that contains itself)")
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise YamlError(f"{source}: a recursive alias (a node that contains itself)")
            stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_yaml(text: str, source: str, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load(text)`` with the alias cap above; YamlError naming ``source`` (a file
    or option) and the parser's first line when the text does not parse, or the key when a
    mapping repeats one."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_nodes(node, max_nodes, source)
        _refuse_repeated_keys(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as err:
        raise YamlError(f"{source}: not valid YAML ({_clip(str(err), 300)})") from None
    except RecursionError:
        raise YamlError(f"{source}: nested too deeply to be a configuration") from None
    finally:
        loader.dispose()


def unique_keys(source: str):
    """An ``object_pairs_hook`` for ``json.loads``: the object as a dict, ValueError naming
    ``source`` and the key when an object repeats one."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(
                    f"{source}: the key {brief(key, 60)} is written twice; expected each key once"
                )
            out[key] = value
        return out

    return build


def error_text(err: BaseException, limit: int = MAX_MESSAGE) -> str:
    """One line of at most ``limit`` characters for a command to print: the message of
    ``err`` (for an error re-raised from a DataLoader worker, the worker's own message, not
    the traceback it carries), whitespace collapsed."""
    text = str(err)
    if "Original Traceback" in text:  # torch's ExceptionWrapper: keep the original error line
        lines = [line for line in text.splitlines() if line.strip()]
        text = lines[-1] if lines else text
    return _clip(text, limit) or type(err).__name__


def _clip(text: str, limit: int) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
