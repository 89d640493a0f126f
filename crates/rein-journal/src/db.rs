//! The connection wrapper shared by the three stores.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Params, Row, Transaction, TransactionBehavior};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{json, sql, Result};
use crate::migrate::{open_store, StoreKind};

/// One connection to one store file. Not `Sync`: share it behind a mutex, or open one per
/// thread or process (WAL and the busy timeout let several coexist).
#[derive(Debug)]
pub(crate) struct Db {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Db {
    pub(crate) fn open(path: &Path, kind: StoreKind) -> Result<Db> {
        let conn = open_store(path, kind)?;
        Ok(Db {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Run `f` in an IMMEDIATE transaction (the write lock is taken up front, so a read followed
    /// by a write never fails with a stale snapshot when another process writes).
    pub(crate) fn write<T>(
        &self,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| sql(&self.path, action, e))?;
        let value = f(&tx)?;
        tx.commit().map_err(|e| sql(&self.path, action, e))?;
        Ok(value)
    }

    /// Run `f` in a DEFERRED transaction: a consistent snapshot for several reads.
    pub(crate) fn read<T>(
        &self,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)
            .map_err(|e| sql(&self.path, action, e))?;
        let value = f(&tx)?;
        tx.commit().map_err(|e| sql(&self.path, action, e))?;
        Ok(value)
    }

    /// Every row `sql` returns for `params`, in order, each mapped by `row`; `action` names the
    /// read in errors.
    pub(crate) fn rows<T>(
        &self,
        action: &str,
        sql: &str,
        params: impl Params,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(self.err(action))?;
        stmt.query_map(params, row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(self.err(action))
    }

    /// [`Db::rows`] for rows with one JSON column: `row` maps the other columns and returns the
    /// JSON text beside them. Once every row is read, each text is parsed (`what` names it in
    /// errors) and handed to `set`.
    pub(crate) fn rows_with_json<T, J: DeserializeOwned>(
        &self,
        action: &str,
        sql: &str,
        params: impl Params,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<(T, String)>,
        what: impl Fn(&T) -> String,
        set: impl Fn(&mut T, J),
    ) -> Result<Vec<T>> {
        self.rows(action, sql, params, row)?
            .into_iter()
            .map(|(mut item, text)| {
                let value = self.parse_json(&what(&item), &text)?;
                set(&mut item, value);
                Ok(item)
            })
            .collect()
    }

    pub(crate) fn err(&self, action: &str) -> impl FnOnce(rusqlite::Error) -> crate::Error + '_ {
        let action = action.to_string();
        move |e| sql(&self.path, action, e)
    }

    pub(crate) fn to_json<T: Serialize + ?Sized>(&self, what: &str, value: &T) -> Result<String> {
        serde_json::to_string(value).map_err(|e| json(&self.path, what, e))
    }

    pub(crate) fn parse_json<T: DeserializeOwned>(&self, what: &str, text: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|e| json(&self.path, what, e))
    }
}

/// Define an integer id newtype with Display, FromStr, serde and SQLite conversions.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.trim().parse().map($name)
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.0))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
        }
    };
}
pub(crate) use id_type;

/// Define a text enum with serde names, `as_str`, and SQLite conversions.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// The name stored in the database and used in JSON.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("unknown {} {other:?}", stringify!($name))),
                }
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                let text = value.as_str()?;
                text.parse().map_err(|e: String| rusqlite::types::FromSqlError::Other(e.into()))
            }
        }
    };
}
pub(crate) use text_enum;
