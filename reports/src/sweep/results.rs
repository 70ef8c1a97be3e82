//! The result columns of a sweep table: the scalar fields of
//! [`RunResult`], named and ordered as the struct's fields and typed as
//! they are, read through its serde derive.
//!
//! The struct is the one list of the result columns: a field added to the
//! result is a column of every sweep table, with no second list to keep
//! in step. Fields that are not scalars (the `comm_by_channel` map) have
//! no column.

use polars::prelude::Column;
use serde::Serialize;
use serde::ser::{self, Impossible, SerializeStruct, Serializer};
use sim::train::RunResult;
use std::fmt;

/// The result columns, in order.
pub(super) fn names() -> Vec<&'static str> {
    fields(&RunResult::default())
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// The result columns of `results`, one value per result, each column
/// typed as its field (also when there are no results).
pub(super) fn columns<'a, T: Serialize + Default + 'a>(
    results: impl IntoIterator<Item = &'a T>,
) -> Vec<Column> {
    let mut columns: Vec<(&str, Values)> = fields(&T::default())
        .into_iter()
        .map(|(name, cell)| (name, Values::like(&cell)))
        .collect();
    for r in results {
        for ((_, values), (_, cell)) in columns.iter_mut().zip(fields(r)) {
            values.push(cell);
        }
    }
    columns
        .into_iter()
        .map(|(name, values)| values.column(name))
        .collect()
}

/// A column's values, of one [`Cell`] type.
enum Values {
    U32(Vec<u32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    Text(Vec<String>),
}

impl Values {
    /// No values yet, of the type of `cell`.
    fn like(cell: &Cell) -> Values {
        match cell {
            Cell::U32(_) => Values::U32(Vec::new()),
            Cell::U64(_) => Values::U64(Vec::new()),
            Cell::F64(_) => Values::F64(Vec::new()),
            Cell::Text(_) => Values::Text(Vec::new()),
        }
    }

    fn push(&mut self, cell: Cell) {
        match (self, cell) {
            (Values::U32(v), Cell::U32(x)) => v.push(x),
            (Values::U64(v), Cell::U64(x)) => v.push(x),
            (Values::F64(v), Cell::F64(x)) => v.push(x),
            (Values::Text(v), Cell::Text(x)) => v.push(x),
            _ => unreachable!("a field of one struct type has one value type"),
        }
    }

    fn column(self, name: &str) -> Column {
        match self {
            Values::U32(v) => Column::new(name.into(), v),
            Values::U64(v) => Column::new(name.into(), v),
            Values::F64(v) => Column::new(name.into(), v),
            Values::Text(v) => Column::new(name.into(), v),
        }
    }
}

/// The value of a scalar field, typed as the field is, so that a table
/// column has the field's type (`u32` counts stay `u32`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    /// `u32`.
    U32(u32),
    /// `u64`.
    U64(u64),
    /// `f64`.
    F64(f64),
    /// A string.
    Text(String),
}

/// The scalar fields of `value` (a struct), in declaration order.
///
/// # Panics
/// If `value` is not a struct: only results are read this way.
pub(super) fn fields<T: Serialize>(value: &T) -> Vec<(&'static str, Cell)> {
    match value.serialize(Cells) {
        Ok(Value::Struct(fields)) => fields,
        _ => panic!("only a struct has fields"),
    }
}

/// What [`Cells`] makes of a value: a scalar, or the scalar fields of a
/// struct.
enum Value {
    Scalar(Cell),
    Struct(Vec<(&'static str, Cell)>),
}

/// A value that is neither a scalar of a [`Cell`] type nor a struct.
#[derive(Debug)]
struct NotScalar;

impl fmt::Display for NotScalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a scalar")
    }
}

impl std::error::Error for NotScalar {}

impl ser::Error for NotScalar {
    fn custom<M: fmt::Display>(_: M) -> NotScalar {
        NotScalar
    }
}

/// The serializer behind [`fields`]: scalars become cells, a struct the
/// list of its scalar fields; anything else is [`NotScalar`].
struct Cells;

/// The fields of a struct, as [`Cells`] collects them.
struct StructFields(Vec<(&'static str, Cell)>);

impl SerializeStruct for StructFields {
    type Ok = Value;
    type Error = NotScalar;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), NotScalar> {
        // a field that is not a scalar has no column
        if let Ok(Value::Scalar(cell)) = value.serialize(Cells) {
            self.0.push((key, cell));
        }
        Ok(())
    }

    fn end(self) -> Result<Value, NotScalar> {
        Ok(Value::Struct(self.0))
    }
}

/// Serializer methods that refuse their value.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Value, NotScalar> {
            Err(NotScalar)
        })*
    };
}

impl Serializer for Cells {
    type Ok = Value;
    type Error = NotScalar;
    type SerializeSeq = Impossible<Value, NotScalar>;
    type SerializeTuple = Impossible<Value, NotScalar>;
    type SerializeTupleStruct = Impossible<Value, NotScalar>;
    type SerializeTupleVariant = Impossible<Value, NotScalar>;
    type SerializeMap = Impossible<Value, NotScalar>;
    type SerializeStruct = StructFields;
    type SerializeStructVariant = Impossible<Value, NotScalar>;

    fn serialize_u32(self, v: u32) -> Result<Value, NotScalar> {
        Ok(Value::Scalar(Cell::U32(v)))
    }

    fn serialize_u64(self, v: u64) -> Result<Value, NotScalar> {
        Ok(Value::Scalar(Cell::U64(v)))
    }

    fn serialize_f64(self, v: f64) -> Result<Value, NotScalar> {
        Ok(Value::Scalar(Cell::F64(v)))
    }

    fn serialize_str(self, v: &str) -> Result<Value, NotScalar> {
        Ok(Value::Scalar(Cell::Text(v.to_string())))
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<StructFields, NotScalar> {
        Ok(StructFields(Vec::with_capacity(len)))
    }

    // types no result field has
    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_f32(f32);
        serialize_char(char);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Value, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<Value, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Value, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotScalar> {
        Err(NotScalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Sample {
        name: String,
        count: u32,
        events: u64,
        seconds: f64,
        by_channel: BTreeMap<String, f64>,
        last: f64,
    }

    #[test]
    fn scalar_fields_in_order_typed_and_maps_left_out() {
        let s = Sample {
            name: "a".into(),
            count: 3,
            events: 1 << 40,
            seconds: 0.5,
            by_channel: [("dp".to_string(), 1.0)].into(),
            last: -1.0,
        };
        assert_eq!(
            fields(&s),
            [
                ("name", Cell::Text("a".into())),
                ("count", Cell::U32(3)),
                ("events", Cell::U64(1 << 40)),
                ("seconds", Cell::F64(0.5)),
                ("last", Cell::F64(-1.0)),
            ]
        );
    }
}
