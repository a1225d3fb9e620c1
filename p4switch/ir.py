"""The p4switch IR: what the front end produces and the pipeline runs.

The IR is an *elaborated, resolved and typed* P4-16 program for one
architecture (v1model):

* every name is resolved: a `Var` names a slot in the scope that declared it
  (`Var.scope`), never a string to look up at run time;
* every expression carries its `type`, and integer literals have been given
  a width (or stay `IntType` only where the language allows, e.g. shift
  amounts, indexes);
* every control and parser *instance* has its own copy of its declaration
  (`ControlInstance.decl`), so tables, actions and extern instances inside it
  carry their final control-plane name (`cp_name`, the P4Info
  fully-qualified name) and need no further context;
* constant expressions are folded.

Names defined here: `Coord`; types (`BitsType`, `BoolType`, `IntType`,
`VarbitType`, `StringType`, `ErrorType`, `MatchKindType`, `VoidType`,
`EnumType`, `HeaderType`, `HeaderUnionType`, `StructType`, `StackType`,
`TupleType`, `ExternType`, `TypeName`, and `NewType` for `type`
declarations); expressions; statements;
declarations; `Program`; `bit_width` (the one width of a type every pass
uses), `control_locals` and `tables_of` (walks over a program's controls);
and `to_json` / `from_json`, the versioned program
file written by ``p4switch-compile`` and read by ``p4switch`` (checked as it is
read by `irdecode`; `ProgramFileError` when it does not fit).

Conventions the pipeline relies on:

* Struct/header field order is declaration order; header field layout on the
  wire is that order, most significant bit first.
* `BinOp.op` is the P4 operator spelled as in source (``+``, ``|+|``, ``++``,
  ``==``, ``&&`` ...). Arithmetic on `BitsType` wraps to the result width;
  the front end has already made both operands the same width except for
  shifts and ``++``.
* `MethodCall` covers every call: `kind` says what is called (see
  `CallKind`), so the pipeline never guesses from a name.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import irdecode

IR_VERSION = 1
IR_FORMAT = "p4switch-ir"
ProgramFileError = irdecode.ProgramFileError


@dataclass(frozen=True, kw_only=True)
class Coord:
    """A position in the user's source (after mapping back through #line)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_COORD = Coord(file="<builtin>", line=0, col=0)


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class BitsType:
    """`bit<W>` (signed=False) or `int<W>` (signed=True)."""

    width: int
    signed: bool = False


@dataclass(frozen=True, kw_only=True)
class BoolType:
    """`bool`."""


@dataclass(frozen=True, kw_only=True)
class IntType:
    """Arbitrary-precision compile-time integer (`int`)."""


@dataclass(frozen=True, kw_only=True)
class VarbitType:
    """`varbit<max_width>`."""

    max_width: int


@dataclass(frozen=True, kw_only=True)
class StringType:
    """A string literal's type (log_msg only)."""


@dataclass(frozen=True, kw_only=True)
class ErrorType:
    """`error` (values: indexes into `Program.errors`)."""


@dataclass(frozen=True, kw_only=True)
class MatchKindType:
    """`match_kind`."""


@dataclass(frozen=True, kw_only=True)
class VoidType:
    """The type of a call that returns nothing."""


@dataclass(frozen=True, kw_only=True)
class TypeName:
    """A reference to a named type in `Program.types` (header, struct, enum...)."""

    name: str


@dataclass(frozen=True, kw_only=True)
class StackType:
    """A header stack `elem[size]`."""

    elem: Type
    size: int


@dataclass(frozen=True, kw_only=True)
class TupleType:
    """`tuple<...>` (also the type of a list expression)."""

    elems: tuple[Type, ...]


@dataclass(frozen=True, kw_only=True)
class ExternType:
    """An extern object type with its type arguments, e.g. register<bit<32>>."""

    name: str
    type_args: tuple[Type, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Field:
    """One field of a header, struct or union, in declaration order."""

    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()
    type_name: str = ""  # the `type` (NewType) it was declared with, if any (P4Info type_name)


@dataclass(frozen=True, kw_only=True)
class HeaderType:
    """A `header` type; its fields in wire order, most significant bit first."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class HeaderUnionType:
    """A `header_union` type: at most one member header valid."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class StructType:
    """A `struct` type."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class EnumType:
    """`enum` (underlying None) or serializable `enum bit<W>` (values given)."""

    name: str
    members: tuple[str, ...]
    underlying: BitsType | None = None
    values: tuple[int, ...] = ()
    coord: Coord = NO_COORD


Type = (
    BitsType | BoolType | IntType | VarbitType | StringType | ErrorType | MatchKindType
    | VoidType | TypeName | StackType | TupleType | ExternType | HeaderType | HeaderUnionType
    | StructType | EnumType
)


@dataclass(frozen=True, kw_only=True)
class Annotation:
    """`@name(...)`: body is the list of constant expressions, or raw tokens text."""

    name: str
    args: tuple[Any, ...] = ()  # ints / strs / bools after folding
    coord: Coord = NO_COORD


# --------------------------------------------------------------------------
# Expressions (each has .type and .coord)
# --------------------------------------------------------------------------


@dataclass(kw_only=True)
class Constant:
    """An integer literal or folded constant of a given type."""

    value: int
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class BoolLit:
    """`true` / `false`."""

    value: bool
    type: Type = field(default_factory=BoolType)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StringLit:
    """A string literal."""

    value: str
    type: Type = field(default_factory=StringType)
    coord: Coord = NO_COORD


class Scope(str, enum.Enum):  # noqa: UP042 (value semantics kept for the file format)
    """Where the storage for a `Var` lives."""

    PARAM = "param"  # parameter of the enclosing parser/control/action/function
    LOCAL = "local"  # local variable (incl. parser/control-level variables)
    INSTANCE = "instance"  # extern/table/parser/control instance of the block
    CONST = "const"  # compile-time constant that could not be folded away


@dataclass(kw_only=True)
class Var:
    """A resolved name. `uid` is unique in the enclosing block (parser/control/action/function)."""

    name: str
    uid: str
    scope: Scope
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Member:
    """`expr.name`: struct/header field, or stack `.next`/`.last`/`.lastIndex`/`.size`."""

    expr: Expr
    name: str
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Index:
    """`stack[index]`."""

    expr: Expr
    index: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Slice:
    """`expr[hi:lo]`, bits hi..lo inclusive; result bit<hi-lo+1>."""

    expr: Expr
    hi: int
    lo: int
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class UnOp:
    """op in {'-', '~', '!'}."""

    op: str
    expr: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class BinOp:
    """op spelled as in P4: + - * / % << >> & | ^ ++ |+| |-| == != < <= > >= && ||."""

    op: str
    left: Expr
    right: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Cast:
    """`(type) expr`."""

    expr: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Mux:
    """`cond ? then : else_`."""

    cond: Expr
    then: Expr
    else_: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ListExpr:
    """`{a, b, c}` as a tuple/list value (also used for field lists)."""

    items: list[Expr]
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StructExpr:
    """`{f1 = a, f2 = b}` or `(T){...}`; `type` names the struct/header."""

    fields: list[tuple[str, Expr]]
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EnumMember:
    """`E.member`; for serializable enums the pipeline uses the member's value."""

    enum: str
    member: str
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ErrorMember:
    """`error.NoError` etc."""

    name: str
    type: Type = field(default_factory=ErrorType)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DontCare:
    """`_` as an argument (out argument whose value is discarded)."""

    type: Type = field(default_factory=VoidType)
    coord: Coord = NO_COORD


class CallKind(str, enum.Enum):  # noqa: UP042 (value semantics kept for the file format)
    """What a `MethodCall` calls."""

    BUILTIN = "builtin"  # method on a value: isValid setValid setInvalid push_front pop_front minSizeInBits ...
    PACKET = "packet"  # packet_in.extract/lookahead/advance/length, packet_out.emit
    EXTERN_METHOD = "extern_method"  # method of an extern instance: counter.count, register.read ...
    EXTERN_FUNCTION = "extern_function"  # v1model/core free functions: mark_to_drop, hash, verify ...
    ACTION = "action"  # direct action call
    FUNCTION = "function"  # user function
    TABLE_APPLY = "table_apply"  # t.apply()
    CONTROL_APPLY = "control_apply"  # sub-control instance .apply(args)
    PARSER_APPLY = "parser_apply"  # sub-parser instance .apply(args)


@dataclass(kw_only=True)
class Argument:
    """An actual argument, bound to the callee's parameter `name` (after named/default args)."""

    name: str
    direction: str  # "in" | "out" | "inout" | "" (directionless)
    value: Expr


@dataclass(kw_only=True)
class MethodCall:
    """Any call. `target` is the object (value, packet, extern/table/control instance) or None.

    For ACTION/FUNCTION, `callee` is the cp_name / uid of the callee declaration.
    For EXTERN_FUNCTION/BUILTIN/PACKET/EXTERN_METHOD, `method` is the P4 name.
    For TABLE_APPLY the result type is the table's apply-result struct: use
    `Member(call, 'hit'|'miss'|'action_run')`.
    """

    kind: CallKind
    method: str
    target: Expr | None
    args: list[Argument]
    type: Type
    callee: str = ""
    type_args: list[Type] = field(default_factory=list)
    coord: Coord = NO_COORD


Expr = (
    Constant | BoolLit | StringLit | Var | Member | Index | Slice | UnOp | BinOp | Cast | Mux
    | ListExpr | StructExpr | EnumMember | ErrorMember | DontCare | MethodCall
)


# --------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------


@dataclass(kw_only=True)
class Assign:
    """`lhs = rhs;`."""

    lhs: Expr
    rhs: Expr
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class CallStmt:
    """A call used as a statement."""

    call: MethodCall
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class If:
    """`if (cond) then else else_`."""

    cond: Expr
    then: Block
    else_: Block | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Block:
    """`{ stmts }`."""

    stmts: list[Stmt]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SwitchCase:
    """labels: action cp_names (table switch) or constant Exprs; [] means default.

    body None means fall through to the next case's body.
    """

    labels: list[Any]
    body: Block | None
    is_default: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Switch:
    """`switch (t.apply().action_run)` (on_action_run=True) or on an expression."""

    expr: Expr
    cases: list[SwitchCase]
    on_action_run: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Exit:
    """`exit;`."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Return:
    """`return;` or `return value;`."""

    value: Expr | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class VarDecl:
    """A local variable. Without `init` it is uninitialised (BMv2: zero / invalid header)."""

    var: Var
    init: Expr | None = None
    coord: Coord = NO_COORD


Stmt = (
    Assign | CallStmt | If | Block | Switch | Exit | Return | VarDecl
)


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# Questions every pass asks of a program
# --------------------------------------------------------------------------

def _as_declared(t: Any) -> Any:
    return t


def bit_width(t: Any, resolve: Callable[[Any], Any] = _as_declared, *,
              opaque: int | None = None) -> int | None:
    """The width in bits of a value of type `t`; None when it has none.

    bit<W> and int<W>: W; bool: 1; a serializable enum: its underlying
    type's; `error` and plain enums: `opaque` (P4 gives them no width, the
    pipeline stores them in 32 bits); a header or struct: the sum of its
    fields', varbit fields left out; a header union: its widest member's; a
    stack: its size times its element's; a tuple: the sum of its elements'.
    Anything else (varbit, int, string, externs) has none, and so has an
    aggregate with a part that has none. `resolve` maps a named type to what
    it names.
    """
    t = resolve(t)
    if isinstance(t, BitsType):
        return t.width
    if isinstance(t, BoolType):
        return 1
    if isinstance(t, EnumType):
        return t.underlying.width if t.underlying is not None else opaque
    if isinstance(t, ErrorType):
        return opaque
    parts: list[int | None]
    if isinstance(t, (HeaderType, StructType)):
        parts = [bit_width(f.type, resolve, opaque=opaque) for f in t.fields
                 if not isinstance(resolve(f.type), VarbitType)]
    elif isinstance(t, HeaderUnionType):
        parts = [bit_width(f.type, resolve, opaque=opaque) for f in t.fields]
        return None if None in parts else max((p for p in parts if p is not None), default=0)
    elif isinstance(t, StackType):
        w = bit_width(t.elem, resolve, opaque=opaque)
        return None if w is None else t.size * w
    elif isinstance(t, TupleType):
        parts = [bit_width(e, resolve, opaque=opaque) for e in t.elems]
    else:
        return None
    return None if None in parts else sum(p for p in parts if p is not None)


def control_locals(blocks: Iterable[object]) -> Iterator[Any]:
    """The locals of the control instances among `blocks` and, in place, of their sub-controls.

    Depth first, in declaration order: a sub-control's `ControlInstance` is
    followed by the locals of its declaration, then by the rest of its
    parent's locals. Parser instances are passed over.
    """
    def walk(ctl: Control) -> Iterator[Any]:
        """The locals of `ctl`, each sub-control's own locals right after it."""
        for loc in ctl.locals:
            yield loc
            if isinstance(loc, ControlInstance):
                yield from walk(loc.decl)

    for inst in blocks:
        if isinstance(inst, ControlInstance):
            yield from walk(inst.decl)


def tables_of(program: Program) -> Iterator[Table]:
    """Every table of the program's controls and their sub-controls (in `control_locals` order)."""
    return (loc for loc in control_locals(program.pipeline.values()) if isinstance(loc, Table))


# --------------------------------------------------------------------------
# Program file: versioned JSON
# --------------------------------------------------------------------------

# The fields typed `Any`, as the program file's decoder reads them.
_ANY_FIELDS: dict[tuple[str, str], Any] = {
    ("SwitchCase", "labels"): list[str | Expr],  # action cp_names (table switch) or constants
    ("Annotation", "args"): tuple[bool | int | str, ...],
}


def _encode(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"@": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = _encode(getattr(obj, f.name))
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [_encode(x) for x in obj]
    if isinstance(obj, dict):
        return {"@dict": [[_encode(k), _encode(v)] for k, v in obj.items()]}
    return obj


def to_json(program: Program, p4info_text: str = "") -> str:
    """Serialise a program (and optionally its P4Info in text format) as a program file."""
    doc = {
        "format": IR_FORMAT,
        "version": IR_VERSION,
        "program": _encode(program),
        "p4info": p4info_text,
    }
    return json.dumps(doc, separators=(",", ":"))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def from_json(text: str | bytes) -> tuple[Program, str]:
    """Load a program file; returns (program, p4info_text).

    The file is untrusted: `irdecode.decode` checks every node, name and
    number before anything is built from it. Raises ProgramFileError.
    """
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProgramFileError(f"not a p4switch program file (bad JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != IR_FORMAT:
        raise ProgramFileError(
            "not a p4switch program file (compile the P4 source with p4switch-compile)"
        )
    version = doc.get("version")
    if type(version) is not int or version != IR_VERSION:
        raise ProgramFileError(
            f"program file version {version!r} is not supported "
            f"(this p4switch reads version {IR_VERSION}); recompile it"
        )
    p4info = doc.get("p4info", "")
    if type(p4info) is not str:
        raise ProgramFileError("invalid program file: p4info: not a string (P4Info in text format)")
    if "program" not in doc:
        raise ProgramFileError("invalid program file: no program")
    program = irdecode.decode(doc["program"], Program, _ANY_FIELDS)
    return program, p4info

