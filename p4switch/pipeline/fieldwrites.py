"""Which header fields a program can write after the parser extracted them.

The deparser uses the answer (see `parsergen`): a field no code writes only
ever holds what extract put there (in range, so it is packed without a
mask), and a header type none of whose fields is written, and that is never
assigned as a whole, still has exactly its extracted bytes when it is
emitted (so they are emitted as they came). Conservative by construction:
anything that might write a field marks it, whatever the direction of the
parameter it is passed to.

Names defined here: `ALL`, `header_writes`.
"""

from __future__ import annotations

from typing import Any

from .. import ir

ALL = "*"  # marks a header type assigned as a whole (every field)

# Extern calls whose arguments are all read (the others may write a field
# passed to them, e.g. hash(out result, ...), register.read(out value, ...)).
_READ_ONLY_EXTERNS = frozenset({
    "verify_checksum", "verify_checksum_with_payload", "count", "write", "log_msg", "assert",
    "assume", "truncate", "digest", "mark_to_drop", "clone", "clone3", "clone_preserving_field_list",
    "resubmit", "resubmit_preserving_field_list", "recirculate", "recirculate_preserving_field_list",
})


def header_writes(program: ir.Program, resolve: Any) -> dict[str, set[str]]:
    """Header type name -> names of the fields the program may write (`ALL`: assigned whole).

    `resolve(type)` resolves type names (`codegen.TypeInfo.resolve`).
    """
    out: dict[str, set[str]] = {}
    seen: set[int] = set()

    def whole(t: Any) -> None:
        """Every header type inside t is assigned as a whole."""
        t = resolve(t)
        if isinstance(t, ir.HeaderType):
            out.setdefault(t.name, set()).add(ALL)
        elif isinstance(t, ir.StackType):
            whole(t.elem)
        elif isinstance(t, (ir.StructType, ir.HeaderUnionType)):
            for f in t.fields:
                whole(f.type)

    def written(e: Any) -> None:
        """e is (or may be) an lvalue that gets written."""
        while isinstance(e, (ir.Slice, ir.Cast)):
            e = e.expr
        t = getattr(e, "type", None)
        if t is None:
            return
        rt = resolve(t)
        if isinstance(rt, (ir.HeaderType, ir.StackType, ir.StructType, ir.HeaderUnionType)):
            whole(rt)
        # the header field the write falls in (a struct-typed header field's
        # member writes that field)
        node = e
        while isinstance(node, (ir.Member, ir.Index, ir.Slice)):
            parent = node.expr
            if isinstance(node, ir.Member) and isinstance(resolve(parent.type), ir.HeaderType):
                out.setdefault(resolve(parent.type).name, set()).add(node.name)
                break
            node = parent

    def walk(node: Any) -> None:
        """Record the header writes of every assignment and call under `node`."""
        if isinstance(node, (list, tuple)):
            for x in node:
                walk(x)
            return
        if isinstance(node, dict):
            for x in node.values():
                walk(x)
            return
        if not hasattr(node, "__dataclass_fields__") or id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, ir.Assign):
            written(node.lhs)
        elif isinstance(node, ir.VarDecl) and node.init is not None:
            written(node.var)  # a header variable's value is built, not extracted
        elif isinstance(node, ir.MethodCall):
            _call(node)
        for name in node.__dataclass_fields__:
            if name in ("type", "coord", "annotations"):
                continue
            walk(getattr(node, name, None))

    def _call(call: ir.MethodCall) -> None:
        k = call.kind
        if k in (ir.CallKind.PACKET, ir.CallKind.BUILTIN, ir.CallKind.TABLE_APPLY):
            return  # extract is the source; emit/validity/stack shifts keep field values
        if k in (ir.CallKind.EXTERN_FUNCTION, ir.CallKind.EXTERN_METHOD) and call.method in _READ_ONLY_EXTERNS:
            return
        if k in (ir.CallKind.CONTROL_APPLY, ir.CallKind.PARSER_APPLY, ir.CallKind.ACTION,
                 ir.CallKind.FUNCTION):
            # composites go by reference (the callee's own writes are found where they are)
            # or are copied in and out whole (copies keep extracted bytes and values together)
            for a in call.args:
                if not _composite(a.value):
                    written(a.value)
            return
        for a in call.args:
            written(a.value)

    def _composite(e: Any) -> bool:
        t = getattr(e, "type", None)
        return t is not None and isinstance(
            resolve(t), (ir.HeaderType, ir.StackType, ir.StructType, ir.HeaderUnionType))

    walk(program.pipeline)
    walk(program.functions)
    walk(program.actions)
    return out


__all__ = ["ALL", "header_writes"]
