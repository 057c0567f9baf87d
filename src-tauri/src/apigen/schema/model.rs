//! The model that reading a schema builds: the Python classes of one tool module, their
//! fields, and the types annotating them.

use std::collections::HashSet;

/// The classes of one tool module: `Params`, an optional `Result`, and every nested or
/// referenced object, in the order they were first met.
#[derive(Debug)]
pub(crate) struct Module {
    pub classes: Vec<Class>,
    pub result: Option<usize>,
}

#[derive(Debug)]
pub(crate) struct Class {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<FieldDef>,
    pub extra: Extra,
    /// Fixed explanations rendered as comments at the top of the class body.
    pub comments: Vec<&'static str>,
}

/// pydantic's `extra` setting for a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// `additionalProperties` absent, `true` or a schema: unknown keys are kept.
    Allow,
    /// `additionalProperties: false`.
    Forbid,
}

#[derive(Debug)]
pub(crate) struct FieldDef {
    /// The property name in the schema, used as the alias when it differs from `py_name`.
    pub schema_name: String,
    pub py_name: String,
    pub ty: Ty,
    pub required: bool,
    /// Python literal of the schema's `default`.
    pub default: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// Python literal of the schema's `examples` list.
    pub examples: Option<String>,
    pub comments: Vec<&'static str>,
}

/// A Python type annotation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    Any,
    None,
    Bool,
    Str(Constraints),
    Int(Constraints),
    Float(Constraints),
    Literal(Vec<Lit>),
    List(Box<Ty>, Constraints),
    Tuple(Vec<Ty>),
    Dict(Box<Ty>, Constraints),
    Class(usize),
    Union(Vec<Ty>),
}

/// A value allowed in `typing.Literal`, already rendered as Python source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Lit(pub String);

/// `Field` keyword arguments constraining a type (`ge=1`, `pattern="…"`), values rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Constraints(pub Vec<(&'static str, String)>);

impl Constraints {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Ty {
    /// `a | b | …` with nested unions flattened, duplicates and `Any` absorbed, all
    /// `Literal`s merged into one, and `None` last.
    pub(crate) fn union(members: Vec<Ty>) -> Ty {
        let mut flat = Vec::new();
        let mut literals: Vec<Lit> = Vec::new();
        // Sets keep de-duplication linear: a hostile schema may list thousands of branches.
        let mut seen_types = HashSet::new();
        let mut seen_literals = HashSet::new();
        let mut literal_at = None;
        let mut none = false;
        let mut stack: Vec<Ty> = members.into_iter().rev().collect();
        while let Some(member) = stack.pop() {
            match member {
                Ty::Any => return Ty::Any,
                Ty::None => none = true,
                Ty::Union(inner) => stack.extend(inner.into_iter().rev()),
                Ty::Literal(values) => {
                    literal_at.get_or_insert(flat.len());
                    for value in values {
                        if seen_literals.insert(value.clone()) {
                            literals.push(value);
                        }
                    }
                }
                other => {
                    if seen_types.insert(other.clone()) {
                        flat.push(other);
                    }
                }
            }
        }
        if let Some(at) = literal_at {
            flat.insert(at, Ty::Literal(literals));
        }
        if none {
            flat.push(Ty::None);
        }
        match flat.len() {
            0 => Ty::Any,
            1 => flat.pop().unwrap_or(Ty::Any),
            _ => Ty::Union(flat),
        }
    }

    pub(crate) fn admits_none(&self) -> bool {
        match self {
            Ty::Any | Ty::None => true,
            Ty::Union(members) => members.contains(&Ty::None),
            _ => false,
        }
    }

    pub(super) fn size(&self) -> usize {
        1 + match self {
            Ty::List(inner, _) | Ty::Dict(inner, _) => inner.size(),
            Ty::Tuple(members) | Ty::Union(members) => members.iter().map(Ty::size).sum(),
            Ty::Literal(values) => values.len(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_are_flattened_and_none_goes_last() {
        let str_ty = Ty::Str(Constraints::default());
        let union = Ty::union(vec![
            Ty::None,
            Ty::Literal(vec![Lit("1".to_owned())]),
            Ty::Union(vec![str_ty.clone(), Ty::Literal(vec![Lit("2".to_owned())])]),
            str_ty.clone(),
        ]);
        assert_eq!(
            union,
            Ty::Union(vec![
                Ty::Literal(vec![Lit("1".to_owned()), Lit("2".to_owned())]),
                str_ty,
                Ty::None
            ]),
            "nested unions flatten, literals merge, duplicates go, None is last"
        );
        assert_eq!(Ty::union(vec![Ty::Bool, Ty::Any]), Ty::Any, "Any absorbs");
        assert_eq!(
            Ty::union(vec![]),
            Ty::Any,
            "an empty union accepts anything"
        );
    }
}
