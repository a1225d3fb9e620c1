"""P4Info generation from the IR, matching what p4c emits for v1model.

p4c's rules reproduced here (control-plane/p4RuntimeSerializer.cpp and
p4RuntimeSymbolTable.cpp, read for behaviour):

* Only what the front end keeps: tables never applied, and actions neither
  listed by a kept table nor called from kept code, are left out (p4c's
  RemoveAllUnusedDeclarations); extern instances are always kept.
* `@hidden` tables, actions, controller headers and header fields get no
  entity, yet keep their names in the symbol table (ids and aliases of the
  others are computed with them there, as p4c's are).
* Entity order: blocks are visited breadth first from the package
  (parser, verify, ingress, egress, compute, deparser), and inside a block in
  declaration order with nested control instances flattened in place; the
  global actions a control uses come first in that control (LocalizeAllActions
  puts them in front); actions are de-duplicated by name.
* Ids, aliases, field ids and annotations follow `p4switch.p4names`;
  bitwidths and `type_info` follow `p4switch.p4types`; table size defaults
  to 1024.
* Digests: one per struct type a `digest()` call sends, named after it; one per
  call whose data's type has no name (a list expression, a bit<W>), named
  digest_N in the order the serializer meets those calls, with a warning.

Names defined here: `build_p4info`, `unnamed_digests` (those calls' names, for
the pipeline), `p4info_text`, `write_p4info`
(text/JSON/binary chosen by file extension like p4c); `P4InfoError` (from
p4names) and `cp_width` (from p4types) are part of this module's surface too,
as its callers meet them with `build_p4info`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from google.protobuf import json_format, text_format

from p4switch import ir
from p4switch.frontend.errors import warn
from p4switch.p4names import (
    ACTION,
    ACTION_PROFILE,
    CONTROLLER_HEADER,
    COUNTER,
    DEFAULT_TABLE_SIZE,
    DIGEST,
    DIRECT_COUNTER,
    DIRECT_METER,
    METER,
    REGISTER,
    TABLE,
    VALUE_SET,
    P4InfoError,
    Symbols,
    anno,
    anno_strings,
    annotate,
    field_ids,
    field_path_name,
    hidden,
    param_name,
    structured_annotations,
)
from p4switch.p4types import TypeInfo, cp_width, named_type
from p4switch.proto import p4i

_MATCH = {"exact": 2, "lpm": 3, "ternary": 4, "range": 5, "optional": 6}


class _Builder:
    def __init__(self, program: ir.Program) -> None:
        self.p = program
        self.sym = Symbols()
        self.info = p4i.P4Info()
        self.actions: dict[str, ir.Action] = {a.cp_name: a for a in program.actions}
        self.types = TypeInfo(program, self.info)

    # ------------------------------------------------------------------ walking
    def blocks(self) -> list[Any]:
        """The package's blocks in p4c's visiting order (`Program.block_order`)."""
        order = self.p.block_order or list(self.p.pipeline)
        return [self.p.pipeline[k] for k in order]

    def controls(self) -> list[ir.ControlInstance]:
        """The package's control instances, in p4c's visiting order."""
        return [i for i in self.blocks() if isinstance(i, ir.ControlInstance)]

    def parsers(self) -> list[ir.ParserInstance]:
        """The package's parser instances, in p4c's visiting order."""
        return [i for i in self.blocks() if isinstance(i, ir.ParserInstance)]

    @staticmethod
    def flat_locals(block: ir.Control | ir.Parser, used_subs: set[str]) -> Iterator[Any]:
        """Locals with those of nested instances in place (p4c inlines them): applied
        sub-controls, and every sub-parser (one instantiated twice is two sets of entities,
        `p.p1.vs` and `p.p2.vs`, as p4c lists them)."""
        for loc in block.locals:
            if isinstance(loc, ir.ControlInstance):
                if loc.cp_name in used_subs:
                    yield from _Builder.flat_locals(loc.decl, used_subs)
            elif isinstance(loc, ir.ParserInstance):
                yield from _Builder.flat_locals(loc.decl, used_subs)
            else:
                yield loc

    def controls_call_extern_function(self) -> bool:
        """Whether a control's apply block or one of its actions calls an extern function
        (mark_to_drop, hash, digest ...), through the functions and sub-controls it calls, as
        p4c sees them once its front end has inlined those."""
        functions = {f.uid: f for f in self.p.functions}
        seen: set[str] = set()

        def calls_one(body: Any) -> bool:
            """Whether `body`, or a function it calls (each looked at once), calls one."""
            for c in _calls(body):
                if c.kind == ir.CallKind.EXTERN_FUNCTION:
                    return True
                if c.kind == ir.CallKind.FUNCTION and c.callee in functions and c.callee not in seen:
                    seen.add(c.callee)
                    if calls_one(functions[c.callee].body):
                        return True
            return False

        def in_control(ctl: ir.Control) -> bool:
            """Whether `ctl` (its apply, its actions, its applied sub-controls) calls one."""
            if calls_one(ctl.apply) or any(calls_one(a.body) for a in self.control_actions(ctl)):
                return True
            return any(in_control(loc.decl) for loc in ctl.locals
                       if isinstance(loc, ir.ControlInstance) and loc.cp_name in self.used_subs)

        return any(in_control(ci.decl) for ci in self.controls())

    def compute_usage(self) -> None:
        """Tables applied, actions referenced, sub-controls applied, digests called (fixpoint)."""
        all_actions: dict[str, ir.Action] = dict(self.actions)
        all_tables: dict[str, ir.Table] = {}
        subs: dict[str, ir.ControlInstance] = {}

        for loc in ir.control_locals(self.controls()):
            if isinstance(loc, ir.Action):
                all_actions[loc.cp_name] = loc
            elif isinstance(loc, ir.Table):
                all_tables[loc.cp_name] = loc
            elif isinstance(loc, ir.ControlInstance):
                subs[loc.cp_name] = loc
        self.all_actions, self.all_tables = all_actions, all_tables
        used_t: set[str] = set()
        used_a: set[str] = set()
        used_s: set[str] = set()
        table_a: set[str] = set()  # listed by an applied table: control-plane parameters
        direct_a: set[str] = set()  # called from an apply block: parameters bound by the call
        # (node, from an apply block?): an action called only from other actions
        # is inlined by p4c's front end (InlineActions) and then dropped as unused
        work: list[tuple[Any, bool]] = [(c.decl.apply, True) for c in self.controls()]
        for prs in self.parsers():
            work.extend((s, True) for st in prs.decl.states for s in st.stmts)
        while work:
            node, in_apply = work.pop()
            for call in _calls(node):
                if call.kind == ir.CallKind.TABLE_APPLY and call.callee not in used_t:
                    used_t.add(call.callee)
                    t = all_tables[call.callee]
                    for ref in t.actions:
                        table_a.add(ref.action)
                        if ref.action not in used_a:
                            used_a.add(ref.action)
                            work.append((all_actions[ref.action].body, False))
                elif call.kind == ir.CallKind.ACTION:
                    if in_apply:
                        direct_a.add(call.callee)
                    if call.callee not in used_a:
                        used_a.add(call.callee)
                        work.append((all_actions[call.callee].body, False))
                elif call.kind == ir.CallKind.CONTROL_APPLY and call.callee not in used_s:
                    used_s.add(call.callee)
                    work.append((subs[call.callee].decl.apply, True))
        self.used_tables, self.used_actions, self.used_subs = used_t, used_a, used_s
        # p4c's P4Info lists the actions of applied tables and those called
        # directly from an apply block; RemoveActionParameters turns the
        # parameters of an action no table lists into locals, so it has none
        self.cp_actions = table_a | direct_a
        self.table_actions = table_a

    def control_actions(self, ctl: ir.Control) -> list[ir.Action]:
        """Actions of one top-level control in p4c's order (localized globals first)."""
        own: list[ir.Action] = []
        globals_: list[str] = []
        for loc in self.flat_locals(ctl, self.used_subs):
            if isinstance(loc, ir.Action):
                if loc.cp_name in self.used_actions:
                    own.append(loc)
                for c in _calls(loc.body):
                    if c.kind == ir.CallKind.ACTION and c.callee in self.actions and c.callee not in globals_:
                        globals_.append(c.callee)
            elif isinstance(loc, ir.Table) and loc.cp_name in self.used_tables:
                for ref in loc.actions:
                    if ref.action in self.actions and ref.action not in globals_:
                        globals_.append(ref.action)
        for c in _calls(ctl.apply):
            if c.kind == ir.CallKind.ACTION and c.callee in self.actions and c.callee not in globals_:
                globals_.append(c.callee)
        return [self.actions[n] for n in globals_ if n in self.used_actions] + own

    def digests(self, *, warn_unnamed: bool = False) -> tuple[list[str], dict[str, ir.Type], dict[str, str]]:
        """The digests p4c's serializer meets, in its order (each block's actions, localized
        globals first, then its apply block): their names, each name's data type, and
        `file:line:col` of each unnamed one's call -> its name.

        A digest of a struct is named after the struct (two calls with one struct are one
        digest). Data of a type with no name (a list expression's tuple, a bit<W>) makes a
        digest per call, named digest_N, N counting those calls in this order, as p4c-bm2-ss
        names them; a call site elaborated twice (a global action in two controls) is one
        digest here, two in p4c. With `warn_unnamed`, each gets a warning at its call, as
        p4c gives one."""
        names: list[str] = []
        types: dict[str, ir.Type] = {d.name: d.type for d in self.p.digests}
        unnamed: dict[str, str] = {}
        for ci in self.controls():
            for body in [a.body for a in self.control_actions(ci.decl)] + [ci.decl.apply]:
                for c in _calls(body):
                    if c.kind != ir.CallKind.EXTERN_FUNCTION or c.method != "digest":
                        continue
                    targ = c.type_args[0]
                    name = targ.name if isinstance(targ, ir.TypeName) else getattr(targ, "name", "")
                    if not name:
                        site = str(c.coord)
                        name = unnamed.get(site, "")
                        if not name:
                            name = unnamed[site] = f"digest_{len(unnamed)}"
                            types[name] = targ
                            if warn_unnamed:
                                warn(c.coord, f"digest: its data's type has no name: P4Info calls this digest {name}")
                    if name not in names:
                        names.append(name)
        return names, types, unnamed

    # ------------------------------------------------------------------ build
    def build(self) -> p4i.P4Info:
        """The program's P4Info, objects in p4c's order (P4InfoError on what it cannot describe)."""
        self.compute_usage()
        tables: list[ir.Table] = []
        externs: list[ir.ExternInstance] = []
        actions: list[ir.Action] = []
        seen_actions: set[str] = set()
        value_sets: list[ir.ValueSet] = []
        digests, digest_types, _ = self.digests(warn_unnamed=True)
        # Top-level extern instances, used or not, come first: p4c keeps them
        # (RemoveUnusedDeclarations never drops extern instances) and they are
        # children of the top-level block, visited before the package's blocks.
        externs.extend(self.p.global_externs)
        for prs in self.parsers():
            for loc in self.flat_locals(prs.decl, self.used_subs):
                if isinstance(loc, ir.ValueSet):
                    value_sets.append(loc)
                elif isinstance(loc, ir.ExternInstance):
                    externs.append(loc)
        for ci in self.controls():
            for a in self.control_actions(ci.decl):
                if a.cp_name not in seen_actions and a.cp_name in self.cp_actions:
                    seen_actions.add(a.cp_name)
                    actions.append(a)
        for ci in self.controls():
            for loc in self.flat_locals(ci.decl, self.used_subs):
                if isinstance(loc, ir.Table) and loc.cp_name in self.used_tables:
                    tables.append(loc)
                elif isinstance(loc, ir.ExternInstance):
                    externs.append(loc)
        # a top-level extern instance is a local of every block using it: one entity
        firsts: dict[str, ir.ExternInstance] = {}
        for e in externs:  # the first occurrence fixes the position
            firsts.setdefault(e.cp_name, e)
        externs = list(firsts.values())
        by_name = {e.cp_name: e for e in externs}
        # the elaborator only lists @controller_header on header types
        headers = [(h, cast(ir.HeaderType, self.p.types[h.header])) for h in self.p.controller_headers]

        # symbols (collection order does not matter for ids: names are sorted)
        sym = self.sym
        for a in actions:
            sym.add(ACTION, a.cp_name, a.annotations)
        for e in externs:
            kind = _extern_kind(e.type.name)
            if kind:
                sym.add(kind, e.cp_name, e.annotations)
        for t in tables:
            sym.add(TABLE, t.cp_name, t.annotations)
            if t.direct_counter:
                sym.add(DIRECT_COUNTER, t.direct_counter, by_name[t.direct_counter].annotations)
            if t.direct_meter:
                sym.add(DIRECT_METER, t.direct_meter, by_name[t.direct_meter].annotations)
        for vs in value_sets:
            sym.add(VALUE_SET, vs.cp_name, vs.annotations)
        for d in digests:
            sym.add(DIGEST, d)
        for _h, ht in headers:
            sym.add(CONTROLLER_HEADER, ht.name, ht.annotations)
        sym.compute_ids()

        info = self.info
        info.pkg_info.arch = "v1model"
        self.add_pkg_info()
        # @hidden objects keep their symbol (so ids and aliases come out as
        # p4c's) but get no entity: p4c's serializer returns early on them
        for t in tables:
            if not hidden(t.annotations):
                self.add_table(t, by_name)
        for a in actions:
            if not hidden(a.annotations):
                self.add_action(a)
        profile_tables: dict[str, list[str]] = {}
        for t in tables:
            if t.implementation:
                profile_tables.setdefault(t.implementation, []).append(t.cp_name)
        for e in externs:
            self.add_extern(e, profile_tables)
        for h, ht in headers:
            if not hidden(ht.annotations):
                self.add_controller_header(h, ht)
        for vs in value_sets:
            self.add_value_set(vs)
        if (info.tables or any(a.params for a in info.actions) or externs
                or any(h.metadata for h in info.controller_packet_metadata)
                or self.controls_call_extern_function()):
            # p4c's serializer asks for type_info (present from then on, maybe
            # empty) for every table it lists, every action parameter, every
            # extern instance, every controller header field, and every
            # extern function called in a control or its actions (not in a
            # parser: p4c looks at controls only)
            info.type_info.SetInParent()
        for d in digests:
            m = info.digests.add()
            self.preamble(m.preamble, DIGEST, d, ())
            m.type_spec.CopyFrom(self.types.type_spec(digest_types[d]))
        names: dict[str, set[str]] = {}
        for field_name in ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
                           "direct_meters", "registers", "digests", "value_sets"):
            for m in getattr(info, field_name):
                s = names.setdefault(field_name, set())
                if m.preamble.name in s:
                    raise P4InfoError(f"Name '{m.preamble.name}' is used for multiple {field_name[:-1].replace('_', ' ')} objects in the P4Info message")
                s.add(m.preamble.name)
        return info

    def add_pkg_info(self) -> None:
        """pkg_info from the annotations on `main`: @pkginfo keys, others as annotations."""
        pkg = self.info.pkg_info
        for a in self.p.annotations:
            if a.name != "pkginfo":
                continue
            for kv in a.args:
                if not isinstance(kv, str) or "=" not in kv:
                    continue
                key, _, value = kv.partition("=")
                key, value = key.strip(), value.strip()
                if value[:1] in ("'", '"'):
                    value = value[1:-1]
                if key in ("name", "version", "organization", "contact", "url", "arch"):
                    setattr(pkg, key, value)
        annotate(pkg, self.p.annotations, skip=("pkginfo",))

    def preamble(self, pre: Any, kind: int, name: str, annos: tuple[ir.Annotation, ...], alias: str | None = None) -> None:
        """Fill a preamble: id, name, alias (the unique suffix unless given), annotations, doc."""
        pre.id = self.sym.id(kind, name)
        pre.name = name
        pre.alias = alias if alias is not None else self.sym.alias(name)
        annotate(pre, annos)

    def width(self, t: Any) -> int:
        """The control-plane width in bits of type `t`."""
        return cp_width(self.p, t)

    def add_table(self, t: ir.Table, by_name: dict[str, ir.ExternInstance]) -> None:
        """Add table `t`: match fields, action refs, implementation, direct resources."""
        m = self.info.tables.add()
        self.preamble(m.preamble, TABLE, t.cp_name, t.annotations)
        ids = field_ids([k.annotations for k in t.keys])
        for k, fid in zip(t.keys, ids, strict=True):
            if k.match_kind == "selector":
                continue
            named = named_type(self.p, k.expr.type)
            if isinstance(named, ir.EnumType) and named.underlying is None:
                # p4c's getTypeWidth -> TypeMap::widthBits has no width for a plain enum
                raise P4InfoError(f"{k.name}: a table key of type {named.name} cannot be described in P4Info "
                                  f"(width not well-defined for values of type {named.name}; "
                                  "use a serializable enum, enum bit<W>)", k.coord)
            mf = m.match_fields.add()
            mf.id = fid
            mf.name = k.name
            annotate(mf, k.annotations)
            self.types.typed(mf, k.expr.type, k.type_name, enum_name=False)
            if k.match_kind in _MATCH:
                mf.match_type = _MATCH[k.match_kind]
            else:
                mf.other_match_type = k.match_kind
        for ref in t.actions:
            ar = m.action_refs.add()
            ar.id = self.sym.id(ACTION, ref.action)
            ar.annotations.extend(anno_strings(ref.annotations))
            structured_annotations(ar, ref.annotations)
            if anno(ref.annotations, "tableonly"):
                ar.scope = p4i.ActionRef.TABLE_ONLY
            elif anno(ref.annotations, "defaultonly"):
                ar.scope = p4i.ActionRef.DEFAULT_ONLY
        if t.default_action is not None and t.default_is_const:
            m.const_default_action_id = self.sym.id(ACTION, t.default_action.action)
        if t.implementation:
            m.implementation_id = self.sym.id(ACTION_PROFILE, t.implementation)
        if t.direct_counter:
            m.direct_resource_ids.append(self.sym.id(DIRECT_COUNTER, t.direct_counter))
            self.add_counterlike(by_name[t.direct_counter], table=t.cp_name)
        if t.direct_meter:
            m.direct_resource_ids.append(self.sym.id(DIRECT_METER, t.direct_meter))
            self.add_counterlike(by_name[t.direct_meter], table=t.cp_name)
        m.size = t.size if t.size else DEFAULT_TABLE_SIZE  # p4c: a size of 0 means the default
        if t.support_timeout:
            m.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
        if t.const_entries is not None:
            if t.entries_const:
                m.is_const_table = True
            # p4c: an `entries` list with nothing in it is no initial entries
            m.has_initial_entries = len(t.const_entries) > 0

    def add_action(self, a: ir.Action) -> None:
        """Add action `a`; its parameters only when an applied table lists it."""
        m = self.info.actions.add()
        self.preamble(m.preamble, ACTION, a.cp_name, a.annotations)
        data = [p for p in a.params if not p.direction] if a.cp_name in self.table_actions else []
        for p, pid in zip(data, field_ids([p.annotations for p in data]), strict=True):
            pm = m.params.add()
            pm.id = pid
            pm.name = param_name(p.name, p.annotations)
            annotate(pm, p.annotations)
            self.types.typed(pm, p.type, p.type_name, enum_name=True)

    def add_extern(self, e: ir.ExternInstance, profile_tables: dict[str, list[str]]) -> None:
        """Add an extern instance: counter, meter, register or action profile/selector."""
        name = e.type.name
        if name in ("counter", "meter"):
            self.add_counterlike(e, table=None)
        elif name == "register":
            m = self.info.registers.add()
            self.preamble(m.preamble, REGISTER, e.cp_name, e.annotations)
            m.size = _const(e.args[0])
            tname = e.type_arg_names[0] if e.type_arg_names else ""
            if tname in self.p.new_types:  # register<N>, N a `type`: P4NamedType + new_types entry, as p4c
                self.types.new_type(self.p.new_types[tname])
                m.type_spec.new_type.name = tname
            else:
                m.type_spec.CopyFrom(self.types.type_spec(e.type.type_args[0]))
        elif name in ("action_profile", "action_selector"):
            m = self.info.action_profiles.add()
            # p4c (1.2.4.8) turns @max_group_size into the field and drops it from the annotations
            annos = tuple(a for a in e.annotations if a.name != "max_group_size")
            self.preamble(m.preamble, ACTION_PROFILE, e.cp_name, annos)
            for tname in sorted(profile_tables.get(e.cp_name, [])):
                m.table_ids.append(self.sym.id(TABLE, tname))
            m.with_selector = name == "action_selector"
            m.size = _const(e.args[1] if name == "action_selector" else e.args[0])
            mg = anno(e.annotations, "max_group_size")  # groups are a selector's only (p4c)
            if m.with_selector and mg is not None and mg.args and isinstance(mg.args[0], int):
                m.max_group_size = mg.args[0]

    def add_counterlike(self, e: ir.ExternInstance, table: str | None) -> None:
        """Add a counter or meter, direct (of `table`) or indexed (`table` None)."""
        name = e.type.name
        unit_arg = e.args[-1]
        unit = unit_arg.member if isinstance(unit_arg, ir.EnumMember) else ""
        is_counter = name in ("counter", "direct_counter")
        if is_counter:
            spec_unit = {"packets": p4i.CounterSpec.PACKETS, "bytes": p4i.CounterSpec.BYTES,
                         "packets_and_bytes": p4i.CounterSpec.BOTH}.get(unit, 0)
        else:
            spec_unit = {"packets": p4i.MeterSpec.PACKETS, "bytes": p4i.MeterSpec.BYTES}.get(unit, 0)
        if table is not None:
            kind = DIRECT_COUNTER if is_counter else DIRECT_METER
            m = (self.info.direct_counters if is_counter else self.info.direct_meters).add()
            self.preamble(m.preamble, kind, e.cp_name, e.annotations)
            m.spec.unit = spec_unit
            m.direct_table_id = self.sym.id(TABLE, table)
        else:
            kind = COUNTER if is_counter else METER
            m = (self.info.counters if is_counter else self.info.meters).add()
            self.preamble(m.preamble, kind, e.cp_name, e.annotations)
            m.spec.unit = spec_unit
            m.size = _const(e.args[0])

    def add_controller_header(self, h: ir.ControllerHeader, ht: Any) -> None:
        """Add a packet_in/packet_out header as controller_packet_metadata."""
        m = self.info.controller_packet_metadata.add()
        self.preamble(m.preamble, CONTROLLER_HEADER, ht.name, ht.annotations, alias=h.kind)
        m.preamble.name = h.kind
        # a struct-typed field's own fields, each by its path (`b.b`), as p4c flattens them
        paths = list(ir.leaf_fields(ht, lambda t: named_type(self.p, t)))
        for path, fid in zip(paths, field_ids([p[-1].annotations for p in paths]), strict=True):
            f = path[-1]
            if any(hidden(g.annotations) for g in path):
                continue
            md = m.metadata.add()
            md.id = fid
            md.name = field_path_name(path)
            md.annotations.extend(anno_strings(f.annotations))
            self.types.typed(md, f.type, f.type_name, enum_name=False)

    def add_value_set(self, vs: ir.ValueSet) -> None:
        """Add a parser value set: its size and match fields."""
        m = self.info.value_sets.add()
        self.preamble(m.preamble, VALUE_SET, vs.cp_name, vs.annotations)
        m.size = vs.size
        t = named_type(self.p, vs.type)
        if isinstance(t, ir.BitsType):
            mf = m.match.add()
            mf.id = 1
            mf.bitwidth = t.width
            mf.match_type = _MATCH["exact"]
        elif isinstance(t, ir.StructType):
            for f, fid in zip(t.fields, field_ids([f.annotations for f in t.fields]), strict=True):
                mf = m.match.add()
                mf.id = fid
                mf.name = f.name
                mf.bitwidth = self.width(f.type)
                ma = anno(f.annotations, "match")
                kind = ma.args[0] if ma is not None and ma.args else "exact"
                if kind in _MATCH:
                    mf.match_type = _MATCH[kind]
                else:
                    mf.other_match_type = str(kind)
                mf.annotations.extend(anno_strings(f.annotations, skip=("match",)))


def _extern_kind(type_name: str) -> int:
    return {"counter": COUNTER, "meter": METER, "register": REGISTER, "action_profile": ACTION_PROFILE,
            "action_selector": ACTION_PROFILE}.get(type_name, 0)


def _const(x: Any) -> int:
    return x.value if isinstance(x, ir.Constant) else 0


def _calls(node: Any) -> Iterator[ir.MethodCall]:
    """Every MethodCall under an IR node (statements and expressions)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if isinstance(n, ir.MethodCall):
            yield n
            if n.target is not None:
                stack.append(n.target)
            stack.extend(a.value for a in reversed(n.args))
            continue
        if isinstance(n, (ir.Block,)):
            stack.extend(reversed(n.stmts))
        elif isinstance(n, ir.If):
            if n.else_ is not None:
                stack.append(n.else_)
            stack.append(n.then)
            stack.append(n.cond)
        elif isinstance(n, ir.Switch):
            for c in reversed(n.cases):
                if c.body is not None:
                    stack.append(c.body)
            stack.append(n.expr)
        elif isinstance(n, ir.Assign):
            stack.extend([n.rhs, n.lhs])
        elif isinstance(n, ir.CallStmt):
            stack.append(n.call)
        elif isinstance(n, ir.VarDecl):
            if n.init is not None:
                stack.append(n.init)
        elif isinstance(n, ir.Return):
            if n.value is not None:
                stack.append(n.value)
        elif isinstance(n, (ir.Member, ir.Cast, ir.UnOp, ir.Slice)):
            stack.append(n.expr)
        elif isinstance(n, ir.Index):
            stack.extend([n.index, n.expr])
        elif isinstance(n, ir.BinOp):
            stack.extend([n.right, n.left])
        elif isinstance(n, ir.Mux):
            stack.extend([n.else_, n.then, n.cond])
        elif isinstance(n, ir.ListExpr):
            stack.extend(reversed(n.items))
        elif isinstance(n, ir.StructExpr):
            stack.extend(v for _, v in reversed(n.fields))


def build_p4info(program: ir.Program) -> p4i.P4Info:
    """The P4Info p4c would emit for `program` (raises `P4InfoError`)."""
    return _Builder(program).build()


def unnamed_digests(program: ir.Program) -> dict[str, str]:
    """`file:line:col` of each digest() call whose data's type has no name (a list
    expression, a bit<W>) -> the name P4Info gives its digest (digest_N, as p4c does): what
    the pipeline reports such a digest as."""
    b = _Builder(program)
    b.compute_usage()
    return b.digests()[2]


def p4info_text(info: p4i.P4Info) -> str:
    """Protobuf text format, as p4c writes .txt/.txtpb files."""
    return text_format.MessageToString(info)


def write_p4info(info: p4i.P4Info, path: str) -> None:
    """Write in the format given by the extension (.txt/.txtpb text, .json, .bin), like p4c."""
    if path.endswith(".json"):
        data = json_format.MessageToJson(info, indent=2)
        mode, payload = "w", data
    elif path.endswith(".bin"):
        mode, payload = "wb", info.SerializeToString()
    elif path.endswith((".txt", ".txtpb")):
        mode, payload = "w", p4info_text(info)
    else:
        raise P4InfoError(f"{path}: unknown file kind; known suffixes are .bin, .txt, .txtpb, .json")
    with open(path, mode) as f:
        f.write(payload)


__all__ = ["build_p4info", "unnamed_digests", "p4info_text", "write_p4info", "P4InfoError", "cp_width"]
