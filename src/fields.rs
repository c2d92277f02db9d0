//! Reading a config's fields: [`FieldError`] (a problem with one field, before the file
//! name is attached) and the helpers every loop's section parses its fields with.

use serde::Serialize;
use serde::de::DeserializeOwned;
use toml::{Table, Value};

use crate::error::Error;

/// A config field problem, before the file name is attached.
pub(crate) struct FieldError(pub(crate) String);

impl From<Error> for FieldError {
    fn from(e: Error) -> Self {
        FieldError(e.to_string())
    }
}

impl From<metagame_populations::Error> for FieldError {
    fn from(e: metagame_populations::Error) -> Self {
        // The populations crate says "invalid config: …"; the file name says that here.
        FieldError(e.to_string().trim_start_matches("invalid config: ").to_string())
    }
}

/// The fields of `table` named in `fields`, deserialised as `T` (a `*Builder` with every
/// field optional).
pub(crate) fn group<T: DeserializeOwned>(table: &Table, fields: &[&str]) -> Result<T, FieldError> {
    let sub: Table = table
        .iter()
        .filter(|(k, _)| fields.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Table(sub)
        .try_into()
        .map_err(|e: toml::de::Error| FieldError(e.message().trim().replace('\n', " ")))
}

pub(crate) fn string_field<'a>(table: &'a Table, field: &str) -> Result<Option<&'a str>, FieldError> {
    match table.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(FieldError(format!("{field}: expected a string, got {}", other.type_str()))),
    }
}

pub(crate) fn parse_name<T: std::str::FromStr<Err = Error>>(
    table: &Table,
    field: &str,
) -> Result<Option<T>, FieldError> {
    string_field(table, field)?
        .map(|s| s.parse().map_err(|e: Error| FieldError(format!("{field}: {e}"))))
        .transpose()
}

/// `value` (a builder of optional scalars) as a TOML table.
pub(crate) fn table_of<T: Serialize>(value: T) -> Table {
    // INVARIANT: the builders are structs of optional scalars.
    Table::try_from(value).expect("settings serialise to a table")
}
