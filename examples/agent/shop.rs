//! The shop's database for `db.search`: made fresh by every run in the staged (temporary)
//! project folder — no binary file in the repository — and named in the staged
//! `plugins/db_search/config.json`.

use std::path::{Path, PathBuf};

/// Creates `<dir>/data/shop.sqlite`: 60 customers, 400 orders over twelve months (some
/// cancelled). Deterministic, so every run answers the same.
pub fn create(dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let path = dir.join("data").join("shop.sqlite");
    std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
    let mut conn = rusqlite::Connection::open(&path)?;
    let tx = conn.transaction()?;
    tx.execute_batch(
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
         CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                             month INTEGER NOT NULL, total REAL NOT NULL, status TEXT NOT NULL);",
    )?;
    let cities = ["Lyon", "Graz", "Turku", "Porto", "Brno"];
    for id in 1..=60i64 {
        let city = cities[(id as usize) % cities.len()];
        tx.execute(
            "INSERT INTO customers VALUES (?1, ?2, ?3)",
            rusqlite::params![id, format!("customer {id}"), city],
        )?;
    }
    for id in 1..=400i64 {
        let status = if id % 17 == 0 { "cancelled" } else { "paid" };
        tx.execute(
            "INSERT INTO orders VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                id,
                id % 60 + 1,
                (id * 7) % 12 + 1,
                (id * 37 % 500) as f64 + 0.99,
                status
            ],
        )?;
    }
    tx.commit()?;
    Ok(path)
}

/// Names `database` in `<layer>/plugins/db_search/config.json`.
pub fn configure(layer: &Path, database: &Path) -> std::io::Result<()> {
    let file = layer.join("plugins").join("db_search").join("config.json");
    std::fs::create_dir_all(file.parent().unwrap_or(layer))?;
    let config = serde_json::json!({"database": database, "timeout_ms": 1000});
    std::fs::write(file, config.to_string())
}
