//! An override folder beside the compiled-in extensions, reloaded as it changes: `cargo run -p
//! hookpoint-examples --example override_folder`. A manifest (`<name>.json`) re-orders or
//! disables a compiled-in extension; the watcher publishes a new snapshot when a file changes.

use std::sync::mpsc;
use std::time::Duration;

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, extension, point};

/// The lines of a banner.
pub struct Banner {
    /// The lines so far.
    pub lines: Vec<String>,
}

point! {
    /// Assembled when the banner is shown.
    pub static BANNER: SyncPoint<Banner> = "folder.banner";
}

#[extension(point = BANNER, order = 10)]
fn title(b: &mut Banner) {
    b.lines.push("Welcome".into());
}

#[extension(point = BANNER, order = 20)]
fn motd(b: &mut Banner) {
    b.lines.push("Today: maintenance at 18:00".into());
}

fn show(scope: &hookpoint::Scope) -> Result<String, hookpoint::Error> {
    let mut banner = Banner { lines: Vec::new() };
    scope.enter(|| BANNER.call(&mut banner))?;
    Ok(banner.lines.join(" | "))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let scope = ScopeBuilder::new("folder-example")
        .layer(folder.path(), LayerSpec::new(LayerKind::new("project"), 10))
        .build()?;
    println!("compiled in: {}", show(&scope)?);

    let (reloaded, wait) = mpsc::channel();
    scope.on_reload(move |event| {
        let _ = reloaded.send(event.generation);
    });
    // `<layer>/extensions/<point>/<extension>.json`: this one disables `motd`.
    let dir = folder.path().join("extensions/folder.banner");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("motd.json"), r#"{"enabled": false}"#)?;
    wait.recv_timeout(Duration::from_secs(10))?;
    println!("after the manifest: {}", show(&scope)?);

    std::fs::remove_file(dir.join("motd.json"))?;
    wait.recv_timeout(Duration::from_secs(10))?;
    println!("after removing it: {}", show(&scope)?);
    Ok(())
}
