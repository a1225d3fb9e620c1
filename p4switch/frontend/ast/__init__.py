"""The P4 abstract syntax tree: what the parser builds, before any checking.

Nodes are plain dataclasses carrying a `coord` (pycparser `c_ast` style).
Names are still strings; types are still syntax (`TypeRef` nodes); nothing
is resolved. Passes after parsing (see `check`) turn this into the IR.

The nodes live in `typeexpr` (annotations, types, expressions), `stmt`
(statements) and `decl` (declarations and `Program`); the package is their
one vocabulary, so the passes write `A.DTable` whatever module holds it.

Names defined here: `Anno`; type syntax (`TName`, `TBits`, `TVarbit`,
`TBase`, `TSpecialized`, `TStack`, `TTuple`); expressions (`E*`); statements
(`S*`); declarations (`D*`) and table/parser parts; `Program`; `find_anno`.
"""

from __future__ import annotations

from .decl import (
    ActionItem,
    DAction,
    DBlockType,
    DConst,
    DControl,
    DEnum,
    DError,
    DExternFunc,
    DExternObj,
    DFunction,
    DInstance,
    DMatchKind,
    DParser,
    DStruct,
    DTable,
    DTypedef,
    DValueSet,
    DVar,
    EntryAst,
    FieldAst,
    KeyElemAst,
    MethodProto,
    ParamAst,
    Program,
    SelectCaseAst,
    StateAst,
    TableProp,
    TransitionAst,
)
from .stmt import (
    SAssign,
    SBlock,
    SCall,
    SDirectApply,
    SEmpty,
    SExit,
    SIf,
    SReturn,
    SSwitch,
    SwitchCaseAst,
)
from .typeexpr import (
    Anno,
    Arg,
    EBin,
    EBool,
    ECall,
    ECast,
    ECtor,
    EDefault,
    EDontCare,
    EErrorMember,
    EIndex,
    EInt,
    EList,
    EMask,
    EMember,
    EMux,
    EName,
    ERange,
    ESlice,
    EStr,
    EStruct,
    ETuple,
    ETypeMember,
    EUn,
    TBase,
    TBits,
    TName,
    TSpecialized,
    TStack,
    TTuple,
    TVarbit,
    find_anno,
)

__all__ = ["ActionItem", "Anno", "Arg", "DAction", "DBlockType", "DConst", "DControl", "DEnum",
           "DError", "DExternFunc", "DExternObj", "DFunction", "DInstance", "DMatchKind",
           "DParser", "DStruct", "DTable", "DTypedef", "DValueSet", "DVar", "EBin", "EBool",
           "ECall", "ECast", "ECtor", "EDefault", "EDontCare", "EErrorMember", "EIndex", "EInt",
           "EList", "EMask", "EMember", "EMux", "EName", "ERange", "ESlice", "EStr", "EStruct",
           "ETuple", "ETypeMember", "EUn", "EntryAst", "FieldAst", "KeyElemAst", "MethodProto",
           "ParamAst", "Program", "SAssign", "SBlock", "SCall", "SDirectApply", "SEmpty", "SExit",
           "SIf", "SReturn", "SSwitch", "SelectCaseAst", "StateAst", "SwitchCaseAst", "TBase",
           "TBits", "TName", "TSpecialized", "TStack", "TTuple", "TVarbit", "TableProp",
           "TransitionAst", "find_anno"]
