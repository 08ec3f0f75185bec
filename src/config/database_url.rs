//! `--database-url`: which database, checked when parsed, never printed with its
//! password.

use url::Url;

/// A database URL; `Debug` hides its password.
#[derive(Clone)]
pub struct DatabaseUrl(pub String);

impl std::str::FromStr for DatabaseUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if ["sqlite://", "postgres://", "postgresql://"]
            .iter()
            .any(|p| s.starts_with(p))
        {
            Ok(DatabaseUrl(s.to_string()))
        } else {
            Err("expected sqlite://PATH or postgres://…".into())
        }
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match Url::parse(&self.0) {
            Ok(mut url) if url.password().is_some() => {
                let _ = url.set_password(Some("***"));
                write!(f, "{:?}", url.as_str())
            }
            _ => write!(f, "{:?}", self.0),
        }
    }
}

impl DatabaseUrl {
    /// `url` if given, else the SQLite file in `data_dir`.
    pub fn or_default(url: &Option<DatabaseUrl>, data_dir: &std::path::Path) -> String {
        match url {
            Some(url) => url.0.clone(),
            None => format!("sqlite://{}", data_dir.join("mediaedit.db").display()),
        }
    }
}
