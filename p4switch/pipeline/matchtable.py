"""Match-action tables: entries kept as their key kinds allow, looked up per packet.

A `Table` keeps its entries in the structure its key kinds allow (read in line
by the generated code, see `tablegen`), so a lookup
costs one dict probe (exact), one probe per distinct prefix length (one LPM
key plus exact keys), or a scan in priority order (anything with ternary,
range or optional; the highest P4Runtime priority wins, as BMv2 via PI).
Entries of a table with an implementation go through its
`actionprofile.ActionProfile`.

A lookup returns a *result* tuple ``(action_fn, args, hit, action_id)`` that
the generated code calls; results are built once per entry at write time.

Names defined here: `KeySpec`, `ActionInfo`, `Table`, `EntriesView`,
`Result`, `table_mode`, `const_match`, `EMPTY_HIT`.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .actionprofile import ActionProfile
from .externs import GREEN, TrTcm, check_meter_config
from .runtime import Packet
from .state import ActionCall, Code, FieldMatch, StateError, TableEntry

Result = tuple  # (fn, args, hit, action_id)
_monotonic_ns = time.monotonic_ns


def _no_action(*args: Any) -> None:
    return None


EMPTY_HIT: Result = (_no_action, (), True, 0)  # action_id 0 matches no `switch` label


@dataclass(frozen=True, kw_only=True)
class KeySpec:
    """One match field of a table key: name, match kind and width in bits."""

    name: str
    kind: str  # exact | lpm | ternary | range | optional
    width: int


@dataclass(frozen=True, kw_only=True)
class ActionInfo:
    """What a table needs to run an action: the generated function and its data widths."""

    cp_name: str
    fn: Callable[..., Any]
    action_id: int
    param_widths: tuple[int, ...]
    table_only: bool = False  # @tableonly
    default_only: bool = False  # @defaultonly


class _Rec:
    """One installed entry: the TableEntry, its result, direct meter, selector choices."""

    __slots__ = ("entry", "result", "meter", "tests", "seq", "idle_reported", "choices", "cver")

    def __init__(self, entry: TableEntry, result: Result | None, seq: int) -> None:
        self.entry = entry
        self.result = result  # None: through the action profile (see Table.choices)
        self.meter: TrTcm | None = None
        self.tests: tuple = ()
        self.seq = seq
        self.idle_reported = False
        # shared and never mutated: Table.choices assigns a new list (one object
        # fewer per entry for the garbage collector to track)
        self.choices: Sequence[Result] = ()
        self.cver = -1  # ActionProfile.version the choices were built for


def table_mode(kinds: list[str]) -> str:
    """How a table with these (non-selector) key kinds is indexed: exact | lpm | scan."""
    if all(k == "exact" for k in kinds):
        return "exact"
    if kinds.count("lpm") == 1 and all(k in ("exact", "lpm") for k in kinds):
        return "lpm"
    return "scan"


class EntriesView(Sequence):
    """A read-only, copy-free view of a table's installed entries (insertion order).

    The entries are the live objects: read them, never change them. The
    view follows later writes (it is not a snapshot).
    """

    __slots__ = ("_recs",)

    def __init__(self, recs: dict[tuple, _Rec]) -> None:
        self._recs = recs

    def __len__(self) -> int:
        return len(self._recs)

    def __iter__(self) -> Iterator[TableEntry]:
        return (r.entry for r in self._recs.values())

    def __getitem__(self, i: Any) -> Any:  # int or slice, as list
        lst = [r.entry for r in self._recs.values()]
        return lst[i]


class Table:
    """A table of one control instance.

    The generated code reads the index structures directly (they are
    mutated in place, never replaced): `fast` (exact: key -> value), `plens`
    (single-key LPM: (mask, {masked key: value}) longest prefix first, only
    the lengths present), `dref` ([default result]) and `dcount` ([packets,
    bytes] of the default entry's direct counter). A value is the result
    tuple itself when the table is `simple` (no direct resources, no
    profile), else the entry's `_Rec`. `lookup(key, pk, sel)` is the same
    lookup as a method (tests, other callers).
    """

    def __init__(self, name: str, keys: list[KeySpec], actions: dict[str, ActionInfo], *,
                 default: ActionCall, default_const: bool = False, size: int = 1024,
                 profile: ActionProfile | None = None, direct_counter: bool = False,
                 direct_meter: str = "", direct_meter_bytes: bool = False,
                 immutable: bool = False, support_timeout: bool = False) -> None:
        self.name = name
        self.keys = keys
        self.actions = actions
        self.size = size
        self.profile = profile
        self.direct_counter = direct_counter
        self.direct_meter = direct_meter
        self.direct_meter_bytes = direct_meter_bytes
        self.immutable = immutable
        self.support_timeout = support_timeout
        self.program_default = default
        self.default_const = default_const
        self.recs: dict[tuple, _Rec] = {}
        self._seq = itertools.count()
        self._rcache: dict[tuple[str, tuple[int, ...]], Result] = {}  # (action, args) -> result
        self.mode = table_mode([k.kind for k in keys])
        self._scan_mode = self.mode == "scan"
        self._key_range = range(len(keys))
        if self.mode == "lpm":
            self.lpm_index = [k.kind for k in keys].index("lpm")
            w = keys[self.lpm_index].width
            # the mask of each prefix length, 0..width (index = prefix length)
            self._plen_masks = tuple(((1 << p) - 1) << (w - p) for p in range(w + 1))
        self.single = len(keys) == 1
        # no direct resources and no profile: the index holds the results themselves
        self.simple = not direct_counter and not direct_meter and profile is None and not support_timeout
        self.fast: dict[Any, Any] = {}  # exact: key -> value
        self._lpm: dict[int, dict[Any, Any]] = {}  # lpm: prefix length -> {masked key: value}
        self.plens: list[tuple[int, dict]] = []  # (mask, dict), longest prefix first
        self._scan: list[_Rec] = []  # scan: entries in priority order
        self._scan_keys: list[tuple] = []
        self.default_action = default
        self.dref: list[Result] = [self._result(default, hit=False)]
        self.dcount: list[int] = [0, 0]  # the default entry's direct counter: packets, bytes
        self.dmeter: TrTcm | None = None  # the default entry's direct meter
        self.dmeter_config: tuple[int, int, int, int] | None = None

    # ---------------------------------------------------------------- results
    def _result(self, call: ActionCall, hit: bool = True) -> Result:
        info = self.actions[call.action]
        return (info.fn, call.args, hit, info.action_id)

    def _hit_result(self, call: ActionCall) -> Result:
        cache = self._rcache
        if len(cache) > 4096 + 2 * len(self.recs):
            # Results of entries deleted long ago: start over (entries keep their own).
            cache.clear()
        # keyed by the call's fields, hashed in C (the dataclass's __hash__ is Python)
        action, args = call.action, call.args
        info = self.actions[action]
        return cache.setdefault((action, args), (info.fn, args, True, info.action_id))

    def _value(self, rec: _Rec) -> Any:
        return rec.result if self.simple else rec

    def choices(self, rec: _Rec) -> Sequence[Result]:
        """The results an entry through the action profile can run (selector: pick one by hash)."""
        prof = self.profile
        assert prof is not None  # only tables with an implementation get here
        e = rec.entry
        if e.member_id is not None:
            out = [self._hit_result(prof.members[e.member_id].action)]
        elif e.group_id is not None:
            out = [self._hit_result(c) for c in prof.group_lists[e.group_id]]
        else:
            assert e.action_set is not None  # one-shot: validated on write
            out = [self._hit_result(c) for c, w in e.action_set for _ in range(w)]
        rec.choices = out
        rec.cver = prof.version
        return out

    def pick(self, rec: _Rec, sel: Callable[[], bytes] | None) -> Result:
        """The result of an entry of an action-profile table: its member, or the selector choice of its group."""
        prof = self.profile
        assert prof is not None  # only tables with an implementation get here
        c = rec.choices if rec.cver == prof.version else self.choices(rec)
        n = len(c)
        if n == 1 or (n and sel is None):
            return c[0]
        if not n:  # BMv2: a hit on an empty group runs no action ("empty_action")
            return EMPTY_HIT
        assert sel is not None and prof._hash is not None  # n > 1: a selector
        return c[prof._hash(sel()) % n]

    def hit_meter(self, rec: _Rec, pk: Packet) -> None:
        """A hit's direct meter colour, kept on the packet for `direct_meter.read`."""
        m = rec.meter
        color = m.execute(pk.length if self.direct_meter_bytes else 1) if m is not None else GREEN
        if pk.meter_colors is None:
            pk.meter_colors = {}
        pk.meter_colors[self.direct_meter] = color

    def miss_meter(self, pk: Packet) -> None:
        """Run the default entry's direct meter on a packet that missed."""
        m = self.dmeter
        if m is not None:
            if pk.meter_colors is None:
                pk.meter_colors = {}
            pk.meter_colors[self.direct_meter] = m.execute(pk.length if self.direct_meter_bytes else 1)

    def _hit(self, rec: _Rec, pk: Packet, sel: Callable[[], bytes] | None) -> Result:
        e = rec.entry
        if self.support_timeout:
            e.last_hit_ns = _monotonic_ns()
            rec.idle_reported = False
        if self.direct_counter:
            e.counter_packets += 1
            e.counter_bytes += pk.length
        if self.direct_meter:
            self.hit_meter(rec, pk)
        r = rec.result
        return r if r is not None else self.pick(rec, sel)

    def _miss(self, pk: Packet) -> Result:
        if self.direct_counter:
            self.dcount[0] += 1
            self.dcount[1] += pk.length
        if self.direct_meter:
            self.miss_meter(pk)
        return self.dref[0]

    # ---------------------------------------------------------------- lookups
    def find(self, key: Any) -> Any:
        """The index value (result or _Rec) matching a packet key, or None."""
        mode = self.mode
        if mode == "exact":
            return self.fast.get(key)
        if mode == "lpm":
            if self.single:
                for mask, d in self.plens:
                    v = d.get(key & mask)
                    if v is not None:
                        return v
                return None
            i = self.lpm_index
            lst = list(key)
            k = key[i]
            for mask, d in self.plens:
                lst[i] = k & mask
                v = d.get(tuple(lst))
                if v is not None:
                    return v
            return None
        if self.single:
            key = (key,)
        for rec in self._scan:
            for i, kind, a, b in rec.tests:
                v = key[i]
                if kind == 0:  # value/mask (exact, lpm, ternary, optional)
                    if v & b != a:
                        break
                elif not a <= v <= b:  # range
                    break
            else:
                return self._value(rec)
        return None

    def lookup(self, key: Any, pk: Packet, sel: Callable[[], bytes] | None = None) -> Result:
        """The result tuple for a packet's key: direct resources updated, selector member picked."""
        v = self.find(key)
        if v is None:
            return self._miss(pk)
        return v if self.simple else self._hit(v, pk, sel)

    # ------------------------------------------------------------ validation
    def _ekey(self, entry: TableEntry) -> tuple:
        # The fields of each FieldMatch (None: a wildcard), not the FieldMatch: equal
        # exactly when the FieldMatches are, and hashed in C rather than by the
        # dataclass's Python __hash__ (twice per insert, once per delete).
        prio = entry.priority if self._scan_mode else 0
        if self.single:
            fm = entry.match.get(0)
            return (None if fm is None else (fm.kind, fm.value, fm.mask, fm.prefix_len, fm.high), prio)
        match = entry.match
        return (tuple([None if (fm := match.get(i)) is None else (fm.kind, fm.value, fm.mask, fm.prefix_len, fm.high)
                       for i in self._key_range]), prio)

    def _check_call(self, call: ActionCall, default: bool = False) -> None:
        info = self.actions.get(call.action)
        if info is None:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': action '{call.action}' is not in its actions")
        if default and info.table_only:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': action '{call.action}' is @tableonly")
        if not default and info.default_only:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': action '{call.action}' is @defaultonly")
        if len(call.args) != len(info.param_widths):
            raise StateError(Code.INVALID_ARGUMENT,
                       f"action '{call.action}' takes {len(info.param_widths)} arguments, got {len(call.args)}")
        for v, w in zip(call.args, info.param_widths, strict=False):
            if w and not 0 <= v < (1 << w):
                raise StateError(Code.INVALID_ARGUMENT, f"action '{call.action}': argument {v} does not fit in {w} bits")

    def _check_entry(self, entry: TableEntry) -> None:
        for i, fm in entry.match.items():
            if not 0 <= i < len(self.keys):
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': no key field {i}")
            k = self.keys[i]
            if fm.kind != k.kind:
                raise StateError(Code.INVALID_ARGUMENT,
                           f"table '{self.name}': key '{k.name}' is {k.kind}, not {fm.kind}")
            top = 1 << k.width
            if not 0 <= fm.value < top or (fm.kind == "range" and not fm.value <= fm.high < top):
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': key '{k.name}' value out of range")
            if fm.kind == "lpm" and not 0 <= fm.prefix_len <= k.width:
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': key '{k.name}' bad prefix length")
        for i, k in enumerate(self.keys):
            if k.kind == "exact" and i not in entry.match:
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': exact key '{k.name}' missing")
        if self.mode == "scan" and entry.priority <= 0 and not self.immutable:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': entries need a priority > 0")
        n_set = sum(x is not None for x in (entry.action, entry.member_id, entry.group_id, entry.action_set))
        if n_set != 1:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': an entry needs exactly one action")
        prof = self.profile
        if entry.action is not None:
            if prof is not None:
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}' takes members/groups, not actions")
            self._check_call(entry.action)
        elif prof is None:
            raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}' has no action profile")
        elif entry.member_id is not None:
            if entry.member_id not in prof.members:
                raise StateError(Code.NOT_FOUND, f"action profile '{prof.name}': no member {entry.member_id}")
        elif entry.group_id is not None:
            if entry.group_id not in prof.groups:
                raise StateError(Code.NOT_FOUND, f"action profile '{prof.name}': no group {entry.group_id}")
            if not prof.groups[entry.group_id].members:
                raise StateError(Code.UNKNOWN, f"table '{self.name}': group {entry.group_id} is empty "
                                         f"(BMv2 EMPTY_GRP: an entry cannot point at an empty group)")
        else:
            if not prof.selector:
                raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': one-shot needs an action selector")
            assert entry.action_set is not None  # the caller checked one of the three is set
            for call, w in entry.action_set:
                self._check_call(call)
                if w < 1:
                    raise StateError(Code.INVALID_ARGUMENT, "one-shot action weight must be >= 1")
        if prof is not None:
            for call in (prof.members[entry.member_id].action,) if entry.member_id is not None else ():
                if call.action not in self.actions:
                    raise StateError(Code.INVALID_ARGUMENT, f"table '{self.name}': member action not in its actions")

    # ---------------------------------------------------------------- writes
    def _make_rec(self, entry: TableEntry, seq: int) -> _Rec:
        call = entry.action
        rec = _Rec(entry, self._hit_result(call) if call is not None else None, seq)
        if entry.meter_config is not None:
            rec.meter = TrTcm(entry.meter_config)
        if not self._scan_mode:  # only a scan compares field by field (find); the others probe dicts
            return rec
        tests = []
        for i, fm in sorted(entry.match.items()):
            w = self.keys[i].width
            full = (1 << w) - 1
            if fm.kind in ("exact", "optional"):
                tests.append((i, 0, fm.value, full))
            elif fm.kind == "lpm":
                m = (full >> (w - fm.prefix_len)) << (w - fm.prefix_len) if fm.prefix_len else 0
                tests.append((i, 0, fm.value & m, m))
            elif fm.kind == "ternary":
                tests.append((i, 0, fm.value & fm.mask, fm.mask))
            else:
                tests.append((i, 1, fm.value, fm.high))
        rec.tests = tuple(tests)
        return rec

    def _refs(self, entry: TableEntry, delta: int) -> None:
        if self.profile is None:
            return
        if entry.member_id is not None:
            k = ("m", entry.member_id)
        elif entry.group_id is not None:
            k = ("g", entry.group_id)
        else:
            return
        self.profile.refs[k] = self.profile.refs.get(k, 0) + delta

    def _lpm_parts(self, entry: TableEntry) -> tuple[int, Any]:
        fm = entry.match.get(self.lpm_index)
        plen = fm.prefix_len if fm else 0
        if self.single:  # the common route table: no list, no tuple
            return plen, (fm.value & self._plen_masks[plen] if fm else 0)
        match = entry.match
        vals = [match[i].value if i in match else 0 for i in self._key_range]
        vals[self.lpm_index] &= self._plen_masks[plen]
        return plen, tuple(vals)

    def _index_add(self, rec: _Rec) -> None:
        e = rec.entry
        mode = self.mode
        if mode == "exact":
            match = e.match
            k = match[0].value if self.single else tuple([match[i].value for i in self._key_range])
            self.fast[k] = rec.result if self.simple else rec
        elif mode == "lpm":
            plen, k = self._lpm_parts(e)
            d = self._lpm.get(plen)
            if d is None:
                d = self._lpm[plen] = {}
                self._rebuild_plens()
            d[k] = rec.result if self.simple else rec
        else:
            sk = (-e.priority, rec.seq)
            i = bisect.bisect(self._scan_keys, sk)
            self._scan_keys.insert(i, sk)
            self._scan.insert(i, rec)

    def _index_remove(self, rec: _Rec) -> None:
        e = rec.entry
        if self.mode == "exact":
            match = e.match
            del self.fast[match[0].value if self.single else tuple([match[i].value for i in self._key_range])]
        elif self.mode == "lpm":
            plen, k = self._lpm_parts(e)
            d = self._lpm[plen]
            del d[k]
            if not d:
                del self._lpm[plen]
                self._rebuild_plens()
        else:
            i = self._scan.index(rec)
            del self._scan[i]
            del self._scan_keys[i]

    def _rebuild_plens(self) -> None:
        # in place: the generated code holds this very list
        w = self.keys[self.lpm_index].width
        self.plens[:] = [(((1 << p) - 1) << (w - p), self._lpm[p]) for p in sorted(self._lpm, reverse=True)]

    def _writable(self) -> None:
        if self.immutable:
            raise StateError(Code.PERMISSION_DENIED, f"table '{self.name}' has const entries")

    def insert(self, entry: TableEntry, *, force: bool = False, trusted: bool = False) -> None:
        """Add an entry. `trusted`: validated by the caller and not kept by it (no check, no copy)."""
        if self.immutable and not force:
            self._writable()
        profile = self.profile
        if not trusted or profile is not None:  # members/groups are state: always checked
            self._check_entry(entry)
        if not trusted:
            check_meter_config(self.name, entry.meter_config)
        k = self._ekey(entry)
        recs = self.recs
        if k in recs:
            raise StateError(Code.ALREADY_EXISTS, f"table '{self.name}': entry already exists")
        if not force and len(recs) >= self.size:
            raise StateError(Code.RESOURCE_EXHAUSTED, f"table '{self.name}' is full ({self.size} entries)")
        if trusted:
            entry.last_hit_ns = _monotonic_ns() if self.support_timeout else 0
        else:
            entry = dataclasses.replace(entry, match=dict(entry.match),
                                        last_hit_ns=_monotonic_ns() if self.support_timeout else 0)
        rec = self._make_rec(entry, next(self._seq))
        recs[k] = rec
        self._index_add(rec)
        if profile is not None:
            self._refs(entry, +1)

    def modify(self, entry: TableEntry, *, trusted: bool = False) -> None:
        """Replace the action (and direct resources) of an existing entry."""
        self._writable()
        if not trusted or self.profile is not None:
            self._check_entry(entry)
        k = self._ekey(entry)
        old = self.recs.get(k)
        if old is None:
            raise StateError(Code.NOT_FOUND, f"table '{self.name}': no such entry")
        if trusted:
            new_entry = entry
            new_entry.counter_packets = old.entry.counter_packets
            new_entry.counter_bytes = old.entry.counter_bytes
            new_entry.last_hit_ns = old.entry.last_hit_ns
        else:
            new_entry = dataclasses.replace(entry, match=dict(entry.match),
                                            counter_packets=old.entry.counter_packets,
                                            counter_bytes=old.entry.counter_bytes,
                                            last_hit_ns=old.entry.last_hit_ns)
        if entry.meter_config is None and old.entry.meter_config is not None:
            new_entry.meter_config = old.entry.meter_config
        rec = self._make_rec(new_entry, old.seq)
        if rec.meter is not None and old.meter is not None and new_entry.meter_config == old.entry.meter_config:
            rec.meter = old.meter
        self._index_remove(old)
        self._refs(old.entry, -1)
        self.recs[k] = rec
        self._index_add(rec)
        self._refs(new_entry, +1)

    def delete(self, entry: TableEntry) -> None:
        """Remove an entry (StateError when there is none with its key)."""
        if self.immutable:
            self._writable()
        old = self.recs.pop(self._ekey(entry), None)
        if old is None:
            raise StateError(Code.NOT_FOUND, f"table '{self.name}': no such entry")
        self._index_remove(old)
        if self.profile is not None:
            self._refs(old.entry, -1)

    def set_direct(self, entry: TableEntry, *, packets: int | None = None, bytes_: int | None = None,
                   meter_config: tuple[int, int, int, int] | None | bool = False) -> None:
        """Write the direct counter / meter of an existing entry (by its match), or of the default entry."""
        if meter_config is not False:
            check_meter_config(self.name, meter_config)  # type: ignore[arg-type]
        if entry.is_default:
            if packets is not None:
                self.dcount[0] = packets
            if bytes_ is not None:
                self.dcount[1] = bytes_
            if meter_config is not False:
                self.dmeter_config = meter_config  # type: ignore[assignment]
                self.dmeter = None if meter_config is None else TrTcm(meter_config)  # type: ignore[arg-type]
            return
        rec = self.recs.get(self._ekey(entry))
        if rec is None:
            raise StateError(Code.NOT_FOUND, f"table '{self.name}': no such entry")
        if packets is not None:
            rec.entry.counter_packets = packets
        if bytes_ is not None:
            rec.entry.counter_bytes = bytes_
        if meter_config is not False:
            rec.entry.meter_config = meter_config  # type: ignore[assignment]
            rec.meter = None if meter_config is None else TrTcm(meter_config)  # type: ignore[arg-type]

    def set_default(self, call: ActionCall | None) -> None:
        """Set the default action (None: back to the program's); refused when it is const."""
        if call is None:
            call = self.program_default
        elif self.default_const and call != self.program_default:
            raise StateError(Code.PERMISSION_DENIED, f"table '{self.name}': the default action is const")
        else:
            self._check_call(call, default=True)
        self.default_action = call
        self.dref[0] = self._result(call, hit=False)

    def entries(self, copy: bool = True) -> Sequence[TableEntry]:
        """The installed entries: copies, or (copy=False) a read-only view of the live entries."""
        if not copy:
            return EntriesView(self.recs)
        return [dataclasses.replace(r.entry, match=dict(r.entry.match)) for r in self.recs.values()]

    def idle_entries(self, now_ns: int | None = None, *, once: bool = True) -> list[TableEntry]:
        """Entries with an idle timeout not hit for that long (copies).

        With `once`, an entry is reported once per idle period: a hit re-arms
        it (what a P4Runtime server needs to send IdleTimeoutNotification).
        """
        if not self.support_timeout:
            return []
        now = _monotonic_ns() if now_ns is None else now_ns
        out = []
        for rec in self.recs.values():
            e = rec.entry
            if e.idle_timeout_ns and now - e.last_hit_ns >= e.idle_timeout_ns:
                if once and rec.idle_reported:
                    continue
                rec.idle_reported = True
                out.append(dataclasses.replace(e, match=dict(e.match)))
        return out

    def find_entry(self, entry: TableEntry) -> TableEntry | None:
        """The installed entry with the same key as `entry`, if any."""
        rec = self.recs.get(self._ekey(entry))
        return None if rec is None else rec.entry

    def default_entry(self) -> TableEntry:
        """The default entry, with its direct counter (misses) and meter config."""
        return TableEntry(match={}, action=self.default_action, is_default=True,
                          counter_packets=self.dcount[0], counter_bytes=self.dcount[1],
                          meter_config=self.dmeter_config)

    def clear(self) -> None:
        """Remove every entry."""
        for rec in list(self.recs.values()):
            self._refs(rec.entry, -1)
        self.recs.clear()
        self.fast.clear()
        self._lpm.clear()
        self.plens.clear()
        self._scan.clear()
        self._scan_keys.clear()


def const_match(kind: str, width: int, ks_kind: str, value: int | None, mask: int | None,
                hi: int | None) -> FieldMatch | None:
    """Turn one const-entry keyset into a FieldMatch (None for a wildcard)."""
    full = (1 << width) - 1
    if ks_kind == "default":
        return None
    if ks_kind == "range":
        return FieldMatch(kind="range", value=value or 0, high=hi or 0)
    if ks_kind == "mask":
        m = (mask or 0) & full
        if kind == "lpm":
            plen = bin(m).count("1")
            return FieldMatch(kind="lpm", value=(value or 0) & m, prefix_len=plen)
        if kind in ("exact", "optional") and m == full:
            return FieldMatch(kind=kind, value=(value or 0) & full)
        return FieldMatch(kind="ternary", value=(value or 0) & m, mask=m)
    v = (value or 0) & full
    if kind == "lpm":
        return FieldMatch(kind="lpm", value=v, prefix_len=width)
    if kind == "ternary":
        return FieldMatch(kind="ternary", value=v, mask=full)
    if kind == "range":
        return FieldMatch(kind="range", value=v, high=v)
    return FieldMatch(kind=kind, value=v)


__all__ = ["KeySpec", "ActionInfo", "Table", "EntriesView", "Result", "table_mode",
           "const_match", "EMPTY_HIT"]
