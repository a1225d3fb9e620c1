"""Compile a v1model program: generate its Python, run it once, build its tables and externs.

`compile_program` turns an IR program into a `CompiledProgram`: the
generated module (`blocks.BlockGen` into a `codegen.ModuleBuilder`), the
functions of the six V1Switch blocks, the constructors of the header,
metadata and standard_metadata structs, and the run-time objects the program
declares (tables with their const entries, counters, registers, meters,
action profiles, value sets, @field_list field paths). `v1model.V1Model` runs
packets through it.

Names defined here: `CompiledProgram`, `compile_program`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from .. import ir
from ..p4names import field_path_name
from . import hashes, runtime
from .blocks import BlockGen
from .codegen import CodegenError, ModuleBuilder, py_name
from .genbase import TableSpec, is_packet_param
from .matchtable import EMPTY_HIT, ActionInfo, KeySpec, Table, const_match
from .state import ActionCall, TableEntry

log = logging.getLogger("p4switch.pipeline")


def _noop(*args: Any) -> None:
    return None


@dataclass(kw_only=True)
class CompiledProgram:
    """A program's generated module and the run-time objects `V1Model` and the switch use."""

    program: ir.Program
    source: str
    ns: dict[str, Any]
    parser: Callable
    verify: Callable | None
    ingress: Callable
    egress: Callable | None
    compute: Callable | None
    deparser: Callable
    new_hdr: Callable
    new_meta: Callable
    new_sm: Callable
    hdr_len: Callable
    tables: dict[str, Table] = field(default_factory=dict)
    externs: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, Any] = field(default_factory=dict)
    value_sets: dict[str, Any] = field(default_factory=dict)
    field_lists: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    controller_headers: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    sm_fields: frozenset[str] = frozenset()
    validity_changes: bool = True  # some control sets headers valid/invalid


def _log_msg(msg: str, data: tuple) -> None:
    try:
        text = msg.format(*data) if data else msg
    except (IndexError, ValueError):
        text = f"{msg} {data}"
    log.debug("log_msg: %s", text)


_LOG_ON = [False]


def _rand_range(lo: int, hi: int) -> int:
    return lo if hi <= lo else random.randint(lo, hi)


def _field_lists(mb: ModuleBuilder, meta_t: Any) -> dict[int, list[tuple[str, ...]]]:
    """@field_list(i, ...) annotated user-metadata fields, as attribute paths."""
    out: dict[int, list[tuple[str, ...]]] = {}

    def walk(t: Any, path: tuple[str, ...]) -> None:
        """Add the @field_list fields of type `t` (at attribute `path`) to `out`."""
        t = mb.ti.resolve(t)
        if not isinstance(t, ir.StructType):
            return
        for f in t.fields:
            p = path + (py_name(f.name),)
            for a in f.annotations:
                if a.name == "field_list":
                    for idx in a.args:
                        if isinstance(idx, int):
                            out.setdefault(idx, []).append(p)
            walk(f.type, p)

    walk(meta_t, ())
    return out


def compile_program(program: ir.Program, *, drop_port: int = 511) -> CompiledProgram:
    """Generate and compile the Python for a v1model program (raises CodegenError)."""
    if program.arch != "v1model":
        raise CodegenError(f"{program.source}: error: architecture {program.arch} is not supported")
    mb = ModuleBuilder(program)
    bg = BlockGen(mb)
    pl = program.pipeline
    try:
        p, vr, ig, eg, ck, dep = (pl[k] for k in ("p", "vr", "ig", "eg", "ck", "dep"))
    except KeyError as e:
        raise CodegenError(f"{program.source}: error: V1Switch without block {e}") from None
    # the front end checked each V1Switch argument is a parser or a control as declared
    names = {
        "parser": bg.parser(cast(ir.ParserInstance, p)), "verify": bg.control(cast(ir.ControlInstance, vr)),
        "ingress": bg.control(cast(ir.ControlInstance, ig)), "egress": bg.control(cast(ir.ControlInstance, eg)),
        "compute": bg.control(cast(ir.ControlInstance, ck)), "deparser": bg.deparser(cast(ir.ControlInstance, dep)),
    }
    params = [x for x in p.decl.params if not is_packet_param(x)]
    if len(params) < 3:
        raise CodegenError(f"{program.source}: error: the parser needs (packet_in, hdr, meta, standard_metadata)")
    hdr_t, meta_t, sm_t = params[0].type, params[1].type, params[2].type
    new_hdr = mb.new_callable(hdr_t)
    new_meta = mb.new_callable(meta_t)
    new_sm = mb.new_callable(sm_t)
    hl = _gen_hdr_len(mb, hdr_t)
    source = "\n".join(mb.lines) + "\n"
    ns: dict[str, Any] = {name: getattr(runtime, name) for name in (
        "Stack", "ExitControl", "PipelineError", "ParserError", "copy_into", "deep_copy", "sx", "shl",
        "div", "mod", "sat_add", "sat_sub", "eq", "stack_last", "stack_next", "lookahead",
        "pack_varbit", "pack_groups")}
    ns.update(pack_fields=hashes.pack_fields, rand_range=_rand_range, log_msg=_log_msg,
              LOG_ON=_LOG_ON, DROP_PORT=drop_port, MONO_NS=time.monotonic_ns, EMPTY_HIT=EMPTY_HIT)
    ns.update({k: v for k, v in mb.globals.items() if not k.startswith("__")})
    try:
        code = compile(source, f"<p4switch:{program.source}>", "exec")
    except SyntaxError as e:  # a generator bug: say where
        raise CodegenError(f"internal error: generated code does not compile: {e}") from None
    _LOG_ON[0] = log.isEnabledFor(logging.DEBUG)
    exec(code, ns)
    blocks = {k: ns[v] for k, v in names.items()}
    for k, inst in (("verify", vr), ("egress", eg), ("compute", ck)):
        if _empty_control(inst):
            blocks[k] = None  # nothing to run: skip the call
    cp = CompiledProgram(
        program=program, source=source, ns=ns, validity_changes=bg.validity_changes,
        **blocks,
        new_hdr=ns[new_hdr], new_meta=ns[new_meta], new_sm=ns[new_sm], hdr_len=ns[hl],
        externs=dict(bg.externs), profiles=dict(bg.profiles), value_sets=dict(bg.value_sets),
        field_lists={**_field_lists(mb, meta_t), **bg.extra_field_lists},
        sm_fields=frozenset(f.name for f in mb.ti.resolve(sm_t).fields),
    )
    for spec in bg.tables:
        cp.tables[spec.table.cp_name] = _build_table(bg, spec, ns)
    for ch in program.controller_headers:
        ht = mb.ti.resolve(ir.TypeName(name=ch.header))
        # by the names P4Info gives them (`p4names.field_path_name`): a struct-typed
        # field's own fields, each by its path
        cp.controller_headers[ch.kind] = [(field_path_name(path), mb.ti.width(path[-1].type))
                                          for path in ir.leaf_fields(ht, mb.ti.resolve)]
    return cp


def _empty_control(inst: Any) -> bool:
    decl = inst.decl
    return not decl.apply.stmts and not any(isinstance(x, ir.VarDecl) and x.init is not None
                                            for x in decl.locals)


def _gen_hdr_len(mb: ModuleBuilder, hdr_t: Any) -> str:
    """hdrlen(hdr): bytes of the valid headers (BMv2's packet length bookkeeping)."""
    name = mb.fresh("hdrlen")
    lines: list[str] = []

    def walk(t: Any, code: str, ind: str = "    ") -> None:
        """Add the lines counting the valid headers of type `t` at `code`."""
        t = mb.ti.resolve(t)
        if isinstance(t, ir.HeaderType):
            if not any(isinstance(mb.ti.resolve(f.type), ir.VarbitType) for f in t.fields):
                lines.append(f"{ind}if {code}._v: n += {mb.ti.width(t) // 8}")
        elif isinstance(t, ir.StackType):
            var = f"h{len(ind) // 4}"
            at = len(lines)
            walk(t.elem, var, ind + "    ")
            if len(lines) > at:  # a stack of varbit headers counts nothing: no empty loop
                lines.insert(at, f"{ind}for {var} in {code}.h:")
        elif isinstance(t, (ir.StructType, ir.HeaderUnionType)):
            for f in t.fields:
                walk(f.type, f"{code}.{py_name(f.name)}", ind)

    walk(hdr_t, "hdr")
    mb.emit(f"def {name}(hdr):")
    mb.emit("    n = 0")
    mb.lines.extend(lines)
    mb.emit("    return n")
    mb.emit("")
    return name


def _arg_value(bg: BlockGen, e: Any) -> int:
    if isinstance(e, ir.Constant):
        return e.value
    if isinstance(e, ir.BoolLit):
        return int(e.value)
    if isinstance(e, ir.Cast):
        return _arg_value(bg, e.expr)
    if isinstance(e, ir.EnumMember):
        return bg.xg.enum_value(e.enum, e.member)
    if isinstance(e, ir.Var) and e.scope == ir.Scope.CONST:
        c = bg.mb.program.constants.get(e.name)
        if c is not None:
            return _arg_value(bg, c)
    raise CodegenError(f"{getattr(e, 'coord', '')}: error: non-constant action argument is not supported")


def _build_table(bg: BlockGen, spec: TableSpec, ns: dict[str, Any]) -> Table:
    """The `Table` of a generated table, its const entries inserted and its globals bound in `ns`."""
    t = spec.table
    infos: dict[str, ActionInfo] = {}
    decls = {**bg.top_actions}
    for ref in t.actions:
        decl = decls.get(ref.action)
        widths: tuple[int, ...] = ()
        if decl is None:
            # control-local action: find it through any control that declared it
            decl = _find_action(bg.mb.program, ref.action)
        if decl is not None:
            widths = tuple(bg.ti.width(p.type) for p in decl.params if p.direction == "")
        names = {a.name for a in ref.annotations}
        infos[ref.action] = ActionInfo(cp_name=ref.action, fn=ns[spec.actions[ref.action]],
                                       action_id=bg.mb.action_id(ref.action), param_widths=widths,
                                       table_only="tableonly" in names,
                                       default_only="defaultonly" in names)
    if t.default_action is not None:
        default = ActionCall(action=t.default_action.action,
                             args=tuple(_arg_value(bg, a) for a in t.default_action.args))
    else:
        default = ActionCall(action="NoAction")
    if default.action not in infos:
        infos[default.action] = ActionInfo(cp_name=default.action, fn=_noop,
                                           action_id=bg.mb.action_id(default.action), param_widths=())
    keys = [KeySpec(name=k.name, kind=k.match_kind, width=w)
            for k, w in zip([k for k in t.keys if k.match_kind != "selector"], spec.key_widths, strict=False)]
    dm = t.direct_meter
    table = Table(t.cp_name, keys, infos, default=default, default_const=t.default_is_const,
                  size=t.size or 1024, profile=bg.profiles.get(t.implementation) if t.implementation else None,
                  direct_counter=bool(t.direct_counter), direct_meter=dm,
                  direct_meter_bytes=bg.direct_meters.get(dm, False),
                  immutable=bool(t.const_entries) and t.entries_const,
                  support_timeout=bool(getattr(t, "support_timeout", False)))
    g = spec.global_name
    ns[g] = table
    # the generated lookups read these structures directly (mutated in place, never replaced)
    ns[g + "_ix"] = table.fast if table.mode == "exact" else table.plens
    ns[g + "_d"] = table.dref
    ns[g + "_dc"] = table.dcount
    ns[g + "_sc"] = table._scan
    if table.profile is not None:
        ns[g + "_pf"] = table.profile
        ns[g + "_h"] = table.profile._hash
    if t.const_entries:
        n = len(t.const_entries)
        ranks = [ce.match_rank or 0 for ce in t.const_entries]
        # const entries: the largest priority here for the smallest BMv2 rank
        order = sorted(range(n), key=lambda i: (ranks[i], i))
        const_prio = {i: n - pos for pos, i in enumerate(order)}
        given = [ce.priority for ce in t.const_entries if ce.priority is not None]
        mirror = (max(given) + min(given) + 1) if given else 0  # mirrored priorities stay > 0
        for i, ce in enumerate(t.const_entries):
            match = {}
            for ki, (ks, k) in enumerate(zip(ce.keys, keys, strict=False)):
                fm = const_match(k.kind, k.width, ks.kind,
                                 _arg_value(bg, ks.value) if ks.value is not None else None,
                                 _arg_value(bg, ks.mask) if ks.mask is not None else None,
                                 _arg_value(bg, ks.hi) if ks.hi is not None else None)
                if fm is not None:
                    match[ki] = fm
            call = ActionCall(action=ce.action.action,
                              args=tuple(_arg_value(bg, a) for a in ce.action.args))
            prio = ce.priority if ce.priority is not None else const_prio[i]
            if ce.priority is not None and not t.largest_priority_wins:
                # the smallest wins (P4-16 `largest_priority_wins = false`): mirrored
                # so that the larger wins here, as P4Runtime compares priorities
                prio = mirror - ce.priority
            table.insert(TableEntry(match=match, priority=prio, action=call), force=True)
    return table


def _find_action(program: ir.Program, cp_name: str) -> ir.Action | None:
    """The first action of the program's controls declared under `cp_name`."""
    return next((loc for loc in ir.control_locals(program.pipeline.values())
                 if isinstance(loc, ir.Action) and loc.cp_name == cp_name), None)


__all__ = ["CompiledProgram", "compile_program"]
