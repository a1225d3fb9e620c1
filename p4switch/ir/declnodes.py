"""The IR's declarations, up to the whole `Program`: actions, tables, externs, parsers, controls.

Every control and parser *instance* holds its own copy of its declaration,
so what it declares carries its final control-plane name (`cp_name`).

Names defined here: `Param`, `Action`, `Function`, `ActionRef`, `KeyElement`,
`Keyset`, `ConstEntry`, `Table`, `ExternInstance`, `ValueSet`, `SelectCase`,
`Transition`, `ParserState`, `Parser`, `Control`, `ParserInstance`,
`ControlInstance`, `ControllerHeader`, `Digest`, `NewType`, `Program`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .exprnodes import Expr
from .stmtnodes import Block, Stmt, VarDecl
from .typenodes import NO_COORD, Annotation, Coord, ExternType, Type


@dataclass(kw_only=True)
class Param:
    """A parameter of an action, function, control, parser or constructor."""

    name: str
    uid: str
    direction: str  # "in" | "out" | "inout" | "" (directionless: action data / ctor)
    type: Type
    annotations: tuple[Annotation, ...] = ()
    type_name: str = ""  # the `type` (NewType) it was declared with, if any (P4Info type_name)
    default: Expr | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Action:
    """An action. `cp_name` is the P4Info fully-qualified name."""

    name: str
    cp_name: str
    params: list[Param]
    body: Block
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Function:
    """A function declaration (generic ones specialised per use)."""

    name: str
    uid: str
    return_type: Type
    params: list[Param]
    body: Block
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ActionRef:
    """An action named in a table (`actions`, `default_action`, entries), with bound args.

    `args` holds the directionless (action data) arguments given in the program
    (default_action / const entries); for the `actions` list they hold the
    arguments of the action's directional parameters, if the list gives any.
    """

    action: str  # Action.cp_name
    args: list[Expr] = field(default_factory=list)
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class KeyElement:
    """One element of a table key: expression, match kind and control-plane name."""

    expr: Expr
    match_kind: str  # exact | lpm | ternary | range | optional | selector
    name: str  # control-plane name of the match field (@name or source text)
    annotations: tuple[Annotation, ...] = ()
    type_name: str = ""  # the `type` (NewType) of the key expression, if any (P4Info type_name)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Keyset:
    """One component of a select case or const entry key.

    kind: "exact" (value), "mask" (value &&& mask), "range" (value .. hi),
    "default" (`default` / `_`), "value_set" (`value` is the value set's Var).
    """

    kind: str
    value: Expr | None = None
    mask: Expr | None = None
    hi: Expr | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ConstEntry:
    """One entry of a table's `entries` (or `const entries`)."""

    keys: list[Keyset]
    action: ActionRef
    priority: int | None = None  # `priority =` or assigned as p4c's EntryPriorities does; None in const entries
    is_const: bool = False  # `const` on one entry of non-const `entries` (P4 1.2.4)
    # BMv2's match order of `const entries` (p4c-bm2-ss's JSON priority): the
    # entry's `@priority(N)`, else its position from 1; the smallest matches
    # first, ties in program order. None: program order
    match_rank: int | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Table:
    """A table of a control instance, with its keys, actions, properties and entries."""

    name: str
    cp_name: str
    keys: list[KeyElement]
    actions: list[ActionRef]
    default_action: ActionRef | None
    default_is_const: bool = False
    const_entries: list[ConstEntry] | None = None
    entries_const: bool = True  # False for P4 1.2.4 non-const `entries`
    # `largest_priority_wins`: False when the entries' smallest priority wins
    # (their `priority` values are still the program's, as p4c gives P4Runtime)
    largest_priority_wins: bool = True
    size: int | None = None
    implementation: str = ""  # cp_name of the action_profile/action_selector instance
    direct_counter: str = ""  # cp_name of the direct_counter instance
    direct_meter: str = ""  # cp_name of the direct_meter instance
    support_timeout: bool = False
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ExternInstance:
    """An extern object instance, e.g. `counter(64, CounterType.packets) c;`.

    `args` are the constructor arguments, folded to constants where possible.
    """

    name: str
    cp_name: str
    uid: str
    type: ExternType
    args: list[Expr]
    annotations: tuple[Annotation, ...] = ()
    type_arg_names: tuple[str, ...] = ()  # the `type` (NewType) of each type argument, or '' (P4Info)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ValueSet:
    """`value_set<T>(size) name;` in a parser."""

    name: str
    cp_name: str
    uid: str
    type: Type
    size: int
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SelectCase:
    """One case of a `select`: keysets and the next state."""

    keysets: list[Keyset]
    state: str  # next state name; "accept" / "reject" are the terminal states
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Transition:
    """`transition state;` (select None) or `transition select(exprs) {cases}`."""

    state: str = ""
    select: list[Expr] | None = None
    cases: list[SelectCase] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ParserState:
    """A parser state: its statements and its transition."""

    name: str
    stmts: list[Stmt]
    transition: Transition
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Parser:
    """A parser declaration as instantiated (one copy per instance)."""

    name: str
    params: list[Param]
    ctor_params: list[Param]
    locals: list[VarDecl | ExternInstance | ValueSet | ParserInstance]
    states: list[ParserState]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Control:
    """A control declaration as instantiated (one copy per instance)."""

    name: str
    params: list[Param]
    ctor_params: list[Param]
    locals: list[VarDecl | ExternInstance | Action | Table | ControlInstance]
    apply: Block
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ParserInstance:
    """A parser instance with its own copy of its declaration (`decl`)."""

    name: str
    uid: str
    cp_name: str
    decl: Parser
    args: list[Expr] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ControlInstance:
    """A control instance with its own copy of its declaration (`decl`)."""

    name: str
    uid: str
    cp_name: str
    decl: Control
    args: list[Expr] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ControllerHeader:
    """A header annotated @controller_header("packet_in"/"packet_out")."""

    kind: str  # "packet_in" | "packet_out"
    header: str  # HeaderType name


@dataclass(kw_only=True)
class Digest:
    """A `digest<T>(receiver, data)` call site's type, for P4Info."""

    name: str  # struct type name (P4Info digest name)
    type: Type


@dataclass(frozen=True, kw_only=True)
class NewType:
    """`type T N;`. In the IR, values of N simply have type T (the front end
    resolves N to T everywhere); the declaration is kept for P4Info
    (`type_info.new_types`, `@p4runtime_translation`)."""

    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Program:
    """A whole v1model program after the front end.

    `pipeline` maps the V1Switch parameter names to instances, in order:
    parser `p`, `vr` (verifyChecksum), `ig` (ingress), `eg` (egress),
    `ck` (computeChecksum), `dep` (deparser).
    """

    arch: str  # "v1model"
    source: str  # path of the main source file
    types: dict[str, Type]  # named types: headers, structs, unions, enums
    errors: list[str]  # members of `error` in declaration order (NoError first)
    match_kinds: list[str]
    constants: dict[str, Expr]  # global constants, folded
    functions: list[Function]
    actions: list[Action]  # top-level actions (cp_name without control prefix)
    pipeline: dict[str, ParserInstance | ControlInstance]
    controller_headers: list[ControllerHeader] = field(default_factory=list)
    digests: list[Digest] = field(default_factory=list)
    annotations: tuple[Annotation, ...] = ()
    new_types: dict[str, NewType] = field(default_factory=dict)  # `type` declarations, for P4Info
    # Top-level extern instances in declaration order, used or not (p4c keeps
    # them all in P4Info). A block using one also lists it in its locals under
    # the same cp_name: that cp_name names ONE object shared by every block.
    global_externs: list[ExternInstance] = field(default_factory=list)
    # `pipeline` keys in the order p4c visits the blocks for P4Info: instances
    # declared at top level (declaration order), then those constructed in
    # `main`'s arguments. Empty means `pipeline` order.
    block_order: list[str] = field(default_factory=list)


__all__ = ["Param", "Action", "Function", "ActionRef", "KeyElement", "Keyset", "ConstEntry", "Table", "ExternInstance", "ValueSet", "SelectCase", "Transition", "ParserState", "Parser", "Control", "ParserInstance", "ControlInstance", "ControllerHeader", "Digest", "NewType", "Program"]
