"""The one YAML loader of the project: task YAMLs, benchmark configs, and any value read back as YAML.

Safe (no ``!!python`` tags), no key twice in one mapping, and without aliases: ``*name`` (and merge keys ``<<: *name``, which use one) is
refused with one line naming the file and line. A 1 kB file of nested aliases expands to gigabytes
("billion laughs"); configs are short, so writing a value out costs nothing. The composed node tree is
kept, so a problem found later by pydantic can name its line (``line_at``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from .errors import ConfigError


class AliasRefused(yaml.composer.ComposerError):
    """An alias in a config: refused before anything is expanded."""


class _Loader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise AliasRefused(None, None, f"YAML alias '*{event.anchor}' is not allowed in configs (aliases "
                                           "can expand without bound): write the value out instead",
                               event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A key written twice is an error (YAML keeps the last silently: `tasks:` twice ran the second list)."""
        first: dict[Any, int] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in first:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key '{key.value}' appears twice (first on line {first[key.value]}): keep one",
                        key.start_mark)
                first[key.value] = key.start_mark.line + 1
        return super().construct_mapping(node, deep)


def loads(text: str) -> Any:
    """Parse a YAML string with the project's loader (raises yaml.YAMLError, AliasRefused included)."""
    return _compose_and_construct(text)[0]


def _compose_and_construct(text: str) -> tuple[Any, Any]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


def read_yaml(path: Path, expected: str) -> tuple[dict[str, Any], Any]:
    """(mapping, composed root node) of a config file; any problem is one ConfigError line with the line number.

    ``expected`` completes "expected a mapping of keys ..." when the file is not a mapping.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "file not found")
    try:
        data, node = _compose_and_construct(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(path, "not UTF-8 text") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(path, f"invalid YAML: {getattr(e, 'problem', None) or e}",
                          None if mark is None else mark.line + 1) from None
    if not isinstance(data, dict):
        raise ConfigError(path, f"expected a mapping of keys ({expected})")
    return data, node


def line_at(node: Any, loc: Sequence[str | int], key: bool = False) -> int | None:
    """1-based line of the value at ``loc`` (of its key with ``key=True``) in a composed YAML tree.

    Where ``loc`` leaves the tree (a missing key), the line of the deepest node that exists.
    """
    if node is None:
        return None
    line = node.start_mark.line + 1
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == str(part)), None)
            if pair is None:
                return line
            node = pair[0] if key and last else pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return line
        line = node.start_mark.line + 1
    return line


def add_mapping_key(text: str, at: Sequence[str], key: str, value: str) -> str:
    """``text`` with ``key: value`` added to the mapping at ``at`` (e.g. ``["source"]``), every other byte kept.

    A program that writes a config back through a YAML dumper loses the team's comments and layout; this edits
    the text: a block mapping gets a line before its first key, at that key's indentation; a flow mapping
    ``{...}`` gets the pair after its brace. The result is parsed again and must hold the value (else ValueError).
    """
    node = _compose_and_construct(text)[1]
    for part in at:
        pair = next(((k, v) for k, v in getattr(node, "value", []) if getattr(k, "value", None) == part), None)
        if pair is None or not isinstance(node, yaml.MappingNode):
            raise ValueError(f"no mapping at {'.'.join(at)}")
        node = pair[1]
    if not isinstance(node, yaml.MappingNode) or not node.value:
        raise ValueError(f"{'.'.join(at)} is not a non-empty mapping")
    shown = value if all(c.isalnum() or c in "_./-" for c in value) and value[:1].isalnum() else _quoted(value)
    lines = text.splitlines(keepends=True)
    if node.flow_style:
        mark = node.start_mark
        offset = sum(len(x) for x in lines[:mark.line]) + mark.column + 1
        out = f"{text[:offset]}{key}: {shown}, {text[offset:]}"
    else:
        first = node.value[0][0].start_mark
        newline = "\r\n" if lines[first.line].endswith("\r\n") else "\n"
        lines.insert(first.line, f"{' ' * first.column}{key}: {shown}{newline}")
        out = "".join(lines)
    data = loads(out)
    for part in at:
        data = data[part]
    if data.get(key) != value:
        raise ValueError(f"could not add {key} to {'.'.join(at)}")
    return out


def _quoted(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar
