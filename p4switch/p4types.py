"""P4Info's types: bitwidths and `type_info`, as p4c's TypeSpecConverter writes them.

`TypeInfo` fills one P4Info's `type_info` (structs, headers, unions, enums,
serializable enums, errors, `type`s, translated or not) as match fields,
parameters, metadata and typed externs need them; `cp_width` is a value's
width as P4Runtime carries it; `named_type` what a type name names.

Names defined here: `TypeInfo`, `cp_width`, `named_type`.
"""

from __future__ import annotations

from typing import Any

from p4switch import ir
from p4switch.p4names import anno, anno_strings
from p4switch.proto import p4i, p4t


def named_type(program: ir.Program, t: Any) -> Any:
    """The type `program`'s type name `t` names (`t` itself when it names none); any
    other type itself."""
    return program.types.get(t.name, t) if isinstance(t, ir.TypeName) else t


def cp_width(program: ir.Program, t: Any) -> int:
    """A value's width as P4Runtime carries it: bit<W>/int<W> W, bool 1, serializable
    enum its underlying width; 0 for what P4Runtime has no bitwidth for."""
    t = named_type(program, t)
    if not isinstance(t, (ir.BitsType, ir.BoolType, ir.EnumType)):
        return 0  # headers, structs and the rest are no P4Runtime bitstring
    return ir.bit_width(t) or 0


class TypeInfo:
    """The `type_info` of P4Info `info` for `program`, filled as types are met."""

    def __init__(self, program: ir.Program, info: p4i.P4Info) -> None:
        self.p = program
        self.info = info

    def typed(self, msg: Any, t: Any, type_name: str, enum_name: bool) -> None:
        """bitwidth and type_name of a match field / param / metadata, as p4c sets them.

        p4c also runs its TypeSpecConverter on the type for the side effect of
        registering user-defined types (enums, serializable enums, `type`s,
        error) in `type_info`; so do we.
        """
        # p4c's TypeSpecConverter takes type_info as an out-parameter, so the
        # field is present (maybe empty) once any type went through it
        self.info.type_info.SetInParent()
        if type_name and type_name in self.p.new_types:
            nt = self.p.new_types[type_name]
            self.new_type(nt)
            msg.type_name.name = type_name
            tr = anno(nt.annotations, "p4runtime_translation")
            if tr is not None and len(tr.args) >= 2:
                msg.bitwidth = tr.args[1] if isinstance(tr.args[1], int) and not isinstance(tr.args[1], bool) else 0
            else:
                msg.bitwidth = cp_width(self.p, nt.type)
            return
        named = named_type(self.p, t)
        if isinstance(named, (ir.EnumType, ir.ErrorType)):
            self.type_spec(t)
        if isinstance(named, ir.EnumType) and named.underlying is None:
            if enum_name:
                msg.type_name.name = named.name
            return
        msg.bitwidth = cp_width(self.p, t)

    def new_type(self, nt: ir.NewType) -> None:
        """Register a `type` in type_info.new_types (translated or original type)."""
        types = self.info.type_info.new_types
        if nt.name in types:
            return
        spec = types[nt.name]
        spec.annotations.extend(anno_strings(nt.annotations, skip=("p4runtime_translation",)))
        tr = anno(nt.annotations, "p4runtime_translation")
        if tr is not None and len(tr.args) >= 2:
            spec.translated_type.uri = str(tr.args[0])
            if isinstance(tr.args[1], int) and not isinstance(tr.args[1], bool):
                spec.translated_type.sdn_bitwidth = tr.args[1]
            else:
                spec.translated_type.sdn_string.SetInParent()
        else:
            spec.original_type.CopyFrom(self.type_spec(nt.type))

    def type_spec(self, t: Any) -> Any:
        """P4DataTypeSpec of `t`, registering named types in type_info."""
        out = p4t.P4DataTypeSpec()
        named = named_type(self.p, t)
        ti = self.info.type_info
        ti.SetInParent()
        if isinstance(named, ir.BitsType):
            if named.signed:
                out.bitstring.int.bitwidth = named.width
            else:
                out.bitstring.bit.bitwidth = named.width
        elif isinstance(named, ir.VarbitType):
            out.bitstring.varbit.max_bitwidth = named.max_width
        elif isinstance(named, ir.BoolType):
            out.bool.SetInParent()
        elif isinstance(named, ir.ErrorType):
            out.error.SetInParent()
            ti.error.members[:] = list(self.p.errors)
        elif isinstance(named, ir.TupleType):
            for e in named.elems:
                out.tuple.members.add().CopyFrom(self.type_spec(e))
        elif isinstance(named, ir.StructType):
            out.struct.name = named.name
            if named.name not in ti.structs:
                st = ti.structs[named.name]
                for f in named.fields:
                    mem = st.members.add()
                    mem.name = f.name
                    if f.type_name in self.p.new_types:  # a `type` field: P4NamedType + new_types entry
                        self.new_type(self.p.new_types[f.type_name])
                        mem.type_spec.new_type.name = f.type_name
                    else:
                        mem.type_spec.CopyFrom(self.type_spec(f.type))
        elif isinstance(named, ir.HeaderType):
            out.header.name = named.name
            if named.name not in ti.headers:
                hs = ti.headers[named.name]
                for f in named.fields:
                    mem = hs.members.add()
                    mem.name = f.name
                    ft = self.type_spec(f.type)
                    mem.type_spec.CopyFrom(ft.bitstring)
        elif isinstance(named, ir.HeaderUnionType):
            out.header_union.name = named.name
            if named.name not in ti.header_unions:
                hu = ti.header_unions[named.name]
                for f in named.fields:
                    mem = hu.members.add()
                    mem.name = f.name
                    mem.header.name = self.type_spec(f.type).header.name
        elif isinstance(named, ir.StackType):
            out.header_stack.header.name = self.type_spec(named.elem).header.name
            out.header_stack.size = named.size
        elif isinstance(named, ir.EnumType):
            if named.underlying is None:
                out.enum.name = named.name
                if named.name not in ti.enums:
                    en = ti.enums[named.name]
                    for mname in named.members:
                        en.members.add().name = mname
            else:
                out.serializable_enum.name = named.name
                if named.name not in ti.serializable_enums:
                    se = ti.serializable_enums[named.name]
                    se.underlying_type.bitwidth = named.underlying.width
                    w = (named.underlying.width + 7) // 8
                    for mname, val in zip(named.members, named.values, strict=True):
                        mem = se.members.add()
                        mem.name = mname
                        mem.value = (val % (1 << named.underlying.width)).to_bytes(w, "big")
        return out


__all__ = ["TypeInfo", "cp_width"]
