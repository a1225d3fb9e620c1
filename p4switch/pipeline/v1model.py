"""The v1model architecture at run time: move packets through a compiled program as BMv2 does.

`V1Model` runs packets: parser -> verifyChecksum -> ingress -> end of
ingress (I2E clone, digest, resubmit, multicast, drop, unicast) -> traffic
manager -> egress -> end of egress (E2E clone, drop, computeChecksum +
deparser, recirculate) -> out. The order and the metadata each copy carries
follow BMv2 simple_switch (`ingress_thread`, `egress_thread`): copies made for
clone/resubmit/recirculate start from zeroed metadata (standard_metadata
included) plus the preserved @field_list fields. The program comes from
`v1compile.compile_program`.

Names defined here: `V1Model`, and the `instance_type` constants
(`PKT_NORMAL` ... `PKT_RESUBMIT`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from . import runtime
from .state import CloneSession, MulticastGroup
from .v1compile import CompiledProgram

log = logging.getLogger("p4switch.pipeline")

PKT_NORMAL, PKT_INGRESS_CLONE, PKT_EGRESS_CLONE, PKT_COALESCED = 0, 1, 2, 3
PKT_RECIRC, PKT_REPLICATION, PKT_RESUBMIT = 4, 5, 6


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
        """Microseconds since the model started (the timestamps of standard_metadata)."""
        return int((self.clock() - self.t0) * 1e6)

    # ------------------------------------------------------------ PRE config
    def set_mcast(self, group_id: int, group: MulticastGroup | None) -> None:
        """Install (None: remove) a multicast group, as (port, rid) copies in BMv2 order."""
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
        """Install (None: remove) a clone session."""
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
                self.digest(name, values)
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
        """Run one packet out of the traffic manager through egress, the deparser and out of `port`."""
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


__all__ = ["V1Model", "PKT_NORMAL", "PKT_INGRESS_CLONE",
           "PKT_EGRESS_CLONE", "PKT_COALESCED", "PKT_RECIRC", "PKT_REPLICATION", "PKT_RESUBMIT"]
