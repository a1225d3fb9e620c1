"""The v1model architecture: compile a program, then move packets through it as BMv2.

`compile_program` turns an IR program into a `CompiledProgram` (generated
module + run-time objects). `V1Model` runs packets: parser -> verifyChecksum
-> ingress -> end of ingress (I2E clone, digest, resubmit, multicast, drop,
unicast) -> traffic manager -> egress -> end of egress (E2E clone, drop,
computeChecksum + deparser, recirculate) -> out. The order and the metadata
each copy carries follow BMv2 simple_switch (`ingress_thread`,
`egress_thread`): copies made for clone/resubmit/recirculate start from zeroed
metadata (standard_metadata included) plus the preserved @field_list fields.

Names defined here: `CompiledProgram`, `compile_program`, `V1Model`, and the
`instance_type` constants (`PKT_NORMAL` ... `PKT_RESUBMIT`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from .. import ir
from . import hashes, runtime
from .blocks import BlockGen
from .codegen import CodegenError, ModuleBuilder, py_name
from .state import ActionCall, CloneSession, MulticastGroup, TableEntry
from .tables import EMPTY_HIT, ActionInfo, KeySpec, Table, const_match

log = logging.getLogger("p4switch.pipeline")
_monotonic = time.monotonic

PKT_NORMAL, PKT_INGRESS_CLONE, PKT_EGRESS_CLONE, PKT_COALESCED = 0, 1, 2, 3
PKT_RECIRC, PKT_REPLICATION, PKT_RESUBMIT = 4, 5, 6


def _noop(*args: Any) -> None:
    return None


@dataclass(kw_only=True)
class CompiledProgram:
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
    params = [x for x in p.decl.params if not (isinstance(x.type, (ir.TypeName, ir.ExternType))
                                               and x.type.name == "packet_in")]
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
        cp.controller_headers[ch.kind] = [(f.name, mb.ti.width(f.type)) for f in ht.fields]
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
        t = mb.ti.resolve(t)
        if isinstance(t, ir.HeaderType):
            if not any(isinstance(mb.ti.resolve(f.type), ir.VarbitType) for f in t.fields):
                lines.append(f"{ind}if {code}._v: n += {mb.ti.width(t) // 8}")
        elif isinstance(t, ir.StackType):
            var = f"h{len(ind) // 4}"
            lines.append(f"{ind}for {var} in {code}.h:")
            walk(t.elem, var, ind + "    ")
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


def _build_table(bg: BlockGen, spec: Any, ns: dict[str, Any]) -> Table:
    t: ir.Table = spec.table
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
    def walk(ctrl: ir.Control) -> ir.Action | None:
        for loc in ctrl.locals:
            if isinstance(loc, ir.Action) and loc.cp_name == cp_name:
                return loc
            if isinstance(loc, ir.ControlInstance):
                r = walk(loc.decl)
                if r is not None:
                    return r
        return None

    for inst in program.pipeline.values():
        if isinstance(inst, ir.ControlInstance):
            r = walk(inst.decl)
            if r is not None:
                return r
    return None


class V1Model:
    """Moves packets through a CompiledProgram. Not thread-safe: the Switch holds its lock.

    `enqueue(port, priority, pk)` hands a packet to the traffic manager and
    returns the queue depth it found (None: dropped); `output(port, data)`
    transmits; `reinject(pk)` queues a resubmitted/recirculated packet for
    ingress; `digest(name, values)` reports a digest.
    """

    def __init__(self, cp: CompiledProgram, *, drop_port: int = 511,
                 enqueue: Callable[[int, int, runtime.Packet], int | None],
                 output: Callable[[int, bytes], None],
                 reinject: Callable[[runtime.Packet], None],
                 digest: Callable[[str, tuple], None] | None = None,
                 queues: int = 1, egress_spec_init_to_drop: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cp = cp
        self.drop_port = drop_port
        self.enqueue_fn = enqueue
        self.pending: Any = None  # the switch's work deque when there is no traffic manager
        self.output = output
        self.reinject = reinject
        self.digest = digest
        self.queues = queues
        self.spec_init = drop_port if egress_spec_init_to_drop else 0
        self.spec_egress = (drop_port + 1) & 0x1FF  # egress starts with egress_spec "not drop"
        self.mcast: dict[int, list[tuple[int, int]]] = {}
        self.sessions: dict[int, CloneSession] = {}
        self.clock = clock
        self.t0 = clock()
        self.stats = {"rx": 0, "tx": 0, "dropped": 0, "errors": 0, "parser_errors": 0}
        sm_t = cp.sm_fields
        self.queueing = {"enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth"} <= sm_t

    def now_us(self) -> int:
        return int((self.clock() - self.t0) * 1e6)

    # ------------------------------------------------------------ PRE config
    def set_mcast(self, group_id: int, group: MulticastGroup | None) -> None:
        if group is None:
            self.mcast.pop(group_id, None)
            return
        order: list[int] = []
        ports: dict[int, list[int]] = {}
        for r in group.replicas:
            if r.instance not in ports:
                order.append(r.instance)
                ports[r.instance] = []
            ports[r.instance].append(r.egress_port)
        self.mcast[group_id] = [(p, rid) for rid in order for p in sorted(set(ports[rid]))]

    def set_session(self, session_id: int, session: CloneSession | None) -> None:
        if session is None:
            self.sessions.pop(session_id, None)
        else:
            self.sessions[session_id] = session

    # ------------------------------------------------------------ helpers
    def _preserve(self, src_meta: Any, dst_meta: Any, fl: int | None) -> None:
        if fl is None or fl < 0:
            return
        for path in self.cp.field_lists.get(fl, ()):
            s, d = src_meta, dst_meta
            for name in path[:-1]:
                s, d = getattr(s, name), getattr(d, name)
            v = getattr(s, path[-1])
            if v.__class__ in (int, bool):
                setattr(d, path[-1], v)
            else:
                runtime.copy_into(getattr(d, path[-1]), v)

    def _enqueue(self, port: int, pk: runtime.Packet) -> None:
        sm = pk.sm
        prio = sm.priority
        if prio >= self.queues:
            log.error("priority %d out of range (%d queues): packet dropped", prio, self.queues)
            self.stats["dropped"] += 1
            return
        if self.pending is not None:  # no traffic manager: egress right after this ingress
            if self.queueing:
                sm.enq_timestamp = int((self.clock() - self.t0) * 1e6) & 0xFFFFFFFF
                sm.enq_qdepth = 0
            self.pending.append(("e", port, prio, pk))
            return
        if self.queueing:
            sm.enq_timestamp = self.now_us() & 0xFFFFFFFF
        depth = self.enqueue_fn(port, prio, pk)
        if depth is None:
            self.stats["dropped"] += 1
        elif self.queueing:
            sm.enq_qdepth = depth

    def _fresh_copy(self, pk: runtime.Packet, itype: int, fl: int | None, hdr: Any,
                    data: bytes | None = None) -> runtime.Packet:
        """A copy with zeroed metadata + preserved fields (BMv2 reset_metadata)."""
        c = runtime.Packet(pk.data if data is None else data, pk.in_port)
        c.hdr = hdr
        c.payload = pk.payload
        c.meta = self.cp.new_meta()
        self._preserve(pk.meta, c.meta, fl)
        c.sm = self.cp.new_sm()
        c.sm.instance_type = itype
        c.length = pk.length
        return c

    def _replicate(self, targets: list[tuple[int, int]], pk: runtime.Packet, truncate: int = 0) -> None:
        last = len(targets) - 1
        for i, (port, rid) in enumerate(targets):
            c = pk
            if i != last:
                c = runtime.Packet(pk.data, pk.in_port)
                c.hdr = runtime.deep_copy(pk.hdr)
                c.meta = runtime.deep_copy(pk.meta)
                c.sm = runtime.deep_copy(pk.sm)
                c.payload = pk.payload
                c.length = pk.length
                c.truncate = pk.truncate
            c.sm.egress_rid = rid
            if truncate and (not c.truncate or truncate < c.truncate):
                c.truncate = truncate
            self._enqueue(port, c)

    def _session_targets(self, sid: int) -> tuple[list[tuple[int, int]], int] | None:
        s = self.sessions.get(sid)
        if s is None:
            return None
        return [(r.egress_port, r.instance) for r in s.replicas], s.packet_length_bytes

    # ------------------------------------------------------------ ingress
    def ingress(self, pk: runtime.Packet, fresh: bool = True) -> None:
        """Run one packet through parser, verify, ingress and the end-of-ingress logic."""
        cp = self.cp
        stats = self.stats
        stats["rx"] += 1
        if fresh:
            meta = pk.meta = cp.new_meta()
            sm = pk.sm = cp.new_sm()
            sm.ingress_port = pk.in_port
            sm.packet_length = pk.length
            sm.ingress_global_timestamp = int((self.clock() - self.t0) * 1e6)
        else:
            sm = pk.sm
            meta = pk.meta
        if self.spec_init:
            sm.egress_spec = self.spec_init
        hdr = pk.hdr = cp.new_hdr()
        pk.pos = 0
        err = cp.parser(pk, hdr, meta, sm)
        pk.payload = pk.data[pk.pos:]
        if err:
            sm.parser_error = err
            stats["parser_errors"] += 1
        verify = cp.verify
        if verify is not None:
            try:
                verify(pk, hdr, meta)
            except runtime.ExitControl:
                pass
            if pk.cksum_err:
                sm.checksum_error = 1
        try:
            cp.ingress(pk, hdr, meta, sm)
        except runtime.ExitControl:
            pass
        egress_spec = sm.egress_spec
        if pk.clone_session is not None or pk.digests is not None or pk.resubmit_fl is not None:
            if self._end_of_ingress_special(pk, hdr, meta):
                return
        mgid = sm.mcast_grp
        if mgid:
            sm.instance_type = PKT_REPLICATION
            targets = self.mcast.get(mgid)
            if targets:
                self._replicate(targets, pk)
            else:
                stats["dropped"] += 1
            return
        if egress_spec == self.drop_port:
            stats["dropped"] += 1
            return
        sm.instance_type = PKT_NORMAL
        pend = self.pending
        if pend is not None and sm.priority < self.queues:
            # no traffic manager: egress right after this ingress (the common case, in line)
            if self.queueing:
                sm.enq_timestamp = int((self.clock() - self.t0) * 1e6) & 0xFFFFFFFF
                sm.enq_qdepth = 0
            if pend:  # copies queued ahead of it (clones) go first: keep the order
                pend.append(("e", egress_spec, sm.priority, pk))
            else:  # nothing ahead: what popping it off the queue would do, without the queue
                self.egress(egress_spec, sm.priority, pk, 0)
            return
        self._enqueue(egress_spec, pk)

    def _end_of_ingress_special(self, pk: runtime.Packet, hdr: Any, meta: Any) -> bool:
        """I2E clone, digest and resubmit (BMv2 order); True when the packet is done (resubmitted)."""
        cp = self.cp
        if pk.clone_session is not None:
            sid, pk.clone_session = pk.clone_session, None
            tg = self._session_targets(sid)
            if tg is not None:
                # BMv2 re-parses the packet as received for the clone
                c = runtime.Packet(pk.data, pk.in_port)
                c.meta, c.sm = cp.new_meta(), cp.new_sm()
                c.sm.ingress_port = pk.in_port
                c.hdr = cp.new_hdr()
                cp.parser(c, c.hdr, c.meta, c.sm)
                c.payload = c.data[c.pos:]
                c.length = len(pk.data)
                copy = self._fresh_copy(c, PKT_INGRESS_CLONE, pk.clone_fl, c.hdr)
                copy.meta = cp.new_meta()
                self._preserve(meta, copy.meta, pk.clone_fl)
                self._replicate(tg[0], copy, tg[1])
        if pk.digests is not None:
            name, values = pk.digests
            pk.digests = None
            if self.digest is not None:
                self.digest(name, values())
        if pk.resubmit_fl is not None:
            c = runtime.Packet(pk.data, pk.in_port)
            c.meta = cp.new_meta()
            self._preserve(meta, c.meta, pk.resubmit_fl)
            c.sm = cp.new_sm()
            c.sm.instance_type = PKT_RESUBMIT
            c.sm.packet_length = len(pk.data)
            self.reinject(c)
            return True
        return False

    # ------------------------------------------------------------ egress
    def egress(self, port: int, prio: int, pk: runtime.Packet, deq_depth: int = 0) -> None:
        cp = self.cp
        sm = pk.sm
        hdr = pk.hdr
        now = int((self.clock() - self.t0) * 1e6)
        sm.egress_global_timestamp = now
        if self.queueing:
            sm.deq_timedelta = (now - sm.enq_timestamp) & 0xFFFFFFFF
            sm.deq_qdepth = deq_depth
        sm.egress_port = port
        sm.egress_spec = self.spec_egress
        sm.packet_length = pk.length
        eg = cp.egress
        if eg is not None:
            try:
                eg(pk, hdr, pk.meta, sm)
            except runtime.ExitControl:
                pass
        if pk.clone_session is not None:
            sid, pk.clone_session = pk.clone_session, None
            tg = self._session_targets(sid)
            if tg is not None:
                copy = self._fresh_copy(pk, PKT_EGRESS_CLONE, pk.clone_fl, runtime.deep_copy(hdr))
                self._replicate(tg[0], copy, tg[1])
        if sm.egress_spec == self.drop_port:
            self.stats["dropped"] += 1
            return
        compute = cp.compute
        if compute is not None:
            try:
                compute(pk, hdr, pk.meta)
            except runtime.ExitControl:
                pass
        data = cp.deparser(pk, hdr)
        if pk.recirc_fl is not None:
            c = runtime.Packet(data, 0)
            c.meta = cp.new_meta()
            self._preserve(pk.meta, c.meta, pk.recirc_fl)
            c.sm = cp.new_sm()
            c.sm.instance_type = PKT_RECIRC
            c.sm.packet_length = len(data)
            self.reinject(c)
            return
        if pk.truncate and pk.truncate < len(data):
            data = data[:pk.truncate]
        self.stats["tx"] += 1
        self.output(port, data)
