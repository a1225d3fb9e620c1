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

This package is one vocabulary: p4switch uses its names as ``ir.BitsType``,
``ir.Program``, ``ir.from_json``, never its modules, which hold one role
each: `typenodes` (`Coord`, the types, `Annotation`),
`exprnodes` (expressions), `stmtnodes` (statements), `declnodes`
(declarations up to `Program`), `queries` (`bit_width`, the one width of a
type every pass uses, and `control_locals` / `tables_of`, the walks over a
program's controls), `progfile` (`to_json` / `from_json`, the versioned
program file written by ``p4switch-compile`` and read by ``p4switch``) and
`decode` (the checks `from_json` runs on an untrusted file;
`ProgramFileError` when it does not fit).

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

from .declnodes import (
    Action,
    ActionRef,
    ConstEntry,
    Control,
    ControlInstance,
    ControllerHeader,
    Digest,
    ExternInstance,
    Function,
    KeyElement,
    Keyset,
    NewType,
    Param,
    Parser,
    ParserInstance,
    ParserState,
    Program,
    SelectCase,
    Table,
    Transition,
    ValueSet,
)
from .decode import ProgramFileError
from .exprnodes import (
    Argument,
    BinOp,
    BoolLit,
    CallKind,
    Cast,
    Constant,
    DontCare,
    EnumMember,
    ErrorMember,
    Expr,
    Index,
    ListExpr,
    Member,
    MethodCall,
    Mux,
    Scope,
    Slice,
    StringLit,
    StructExpr,
    UnOp,
    Var,
)
from .progfile import (
    IR_FORMAT,
    IR_VERSION,
    from_json,
    to_json,
)
from .queries import (
    bit_width,
    control_locals,
    leaf_fields,
    tables_of,
)
from .stmtnodes import (
    Assign,
    Block,
    CallStmt,
    Exit,
    If,
    Return,
    Stmt,
    Switch,
    SwitchCase,
    VarDecl,
)
from .typenodes import (
    NO_COORD,
    Annotation,
    BitsType,
    BoolType,
    Coord,
    EnumType,
    ErrorType,
    ExternType,
    Field,
    HeaderType,
    HeaderUnionType,
    IntType,
    MatchKindType,
    StackType,
    StringType,
    StructType,
    TupleType,
    Type,
    TypeName,
    VarbitType,
    VoidType,
)

__all__ = [
    "Coord", "NO_COORD", "BitsType", "BoolType", "IntType", "VarbitType", "StringType",
    "ErrorType", "MatchKindType", "VoidType", "TypeName", "StackType", "TupleType",
    "ExternType", "Field", "HeaderType", "HeaderUnionType", "StructType", "EnumType",
    "Annotation", "Type", "Constant", "BoolLit", "StringLit", "Scope", "Var", "Member", "Index",
    "Slice", "UnOp", "BinOp", "Cast", "Mux", "ListExpr", "StructExpr", "EnumMember",
    "ErrorMember", "DontCare", "CallKind", "Argument", "MethodCall", "Expr", "Assign",
    "CallStmt", "If", "Block", "SwitchCase", "Switch", "Exit", "Return", "VarDecl", "Stmt",
    "Param", "Action", "Function", "ActionRef", "KeyElement", "Keyset", "ConstEntry", "Table",
    "ExternInstance", "ValueSet", "SelectCase", "Transition", "ParserState", "Parser",
    "Control", "ParserInstance", "ControlInstance", "ControllerHeader", "Digest", "NewType",
    "Program", "bit_width", "control_locals", "leaf_fields", "tables_of", "IR_VERSION", "IR_FORMAT", "to_json",
    "from_json", "ProgramFileError",
]
