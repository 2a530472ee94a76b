//! A folder plugin: a folder with a `plugin.json`, dropped into a plugin root, is a plugin — no
//! compiling, no linking. Its `install` runs once, then its extensions (here a command hook) join
//! the next snapshot; deleting the folder uninstalls it. `cargo run -p hookpoint-examples
//! --example folder_plugin` (Unix; needs `/bin/sh` and `sed`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hookpoint::{ScopeBuilder, extension, point};

/// The lines an application prints when it starts.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Banner {
    /// One entry per line.
    pub lines: Vec<String>,
}

point! {
    /// Builds the start-up banner. `#[serde]`: its payload crosses to command hooks as JSON.
    #[serde]
    pub static BANNER: SyncPoint<Banner> = "small.banner";
}

#[extension(point = BANNER, order = 10)]
fn title(banner: &mut Banner) {
    banner.lines.push("== my app ==".into());
}

const PLUGIN_JSON: &str = r#"{"name": "motd", "description": "Adds the message of the day.",
 "version": "1.0", "install": ["./install.sh"], "uninstall": ["./uninstall.sh"]}"#;

/// The hook reads `{"point": .., "payload": {"lines": [..]}, ..}` on stdin and prints the
/// payload with one more line (order 20, from its file name).
const HOOK: &str = r#"#!/bin/sh
payload=$(sed -e 's/.*"payload":[ ]*\({[^}]*}\).*/\1/')
printf '{"payload": %s}' "$(printf '%s' "$payload" | sed 's/\][ ]*}$/, "Mind the gap."]}/')"
"#;

/// Writes `text` to `path` with `mode`, creating its folder.
fn write(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    fs::create_dir_all(path.parent().expect("a file in a folder"))?;
    fs::write(path, text)?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// Builds the plugin in `staging` (so that it appears in the root whole, by one rename); its
/// install and uninstall scripts append to `log`.
fn build_plugin(staging: &Path, log: &Path) -> std::io::Result<std::path::PathBuf> {
    let dir = staging.join("motd");
    write(&dir.join("plugin.json"), PLUGIN_JSON, 0o644)?;
    for event in ["install", "uninstall"] {
        let script = format!(
            "#!/bin/sh\necho \"{event} $HOOKPOINT_PLUGIN\" >> '{}'\n",
            log.display()
        );
        write(&dir.join(format!("{event}.sh")), &script, 0o755)?;
    }
    write(
        &dir.join("extensions/small.banner/_20_motd.sh"),
        HOOK,
        0o755,
    )?;
    Ok(dir)
}

fn banner(scope: &hookpoint::Scope) -> Result<String, hookpoint::Error> {
    let mut banner = Banner::default();
    scope.enter(|| BANNER.call(&mut banner))?;
    Ok(banner.lines.join(" | "))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (root, staging, logs) = (
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    );
    let log = logs.path().join("plugin.log");
    // Not watched here, so each step is one explicit reload; a watched root needs none.
    let scope = ScopeBuilder::new("folder-plugin-example")
        .plugin_root(root.path())
        .watch(false)
        .build()?;
    println!("without the plugin: {}", banner(&scope)?);

    fs::rename(
        build_plugin(staging.path(), &log)?,
        root.path().join("motd"),
    )?;
    let event = scope.reload();
    println!("installed: {:?}", event.plugins_installed);
    println!("with the plugin: {}", banner(&scope)?);

    fs::remove_dir_all(root.path().join("motd"))?;
    let event = scope.reload();
    println!("uninstalled: {:?}", event.plugins_uninstalled);
    println!("after removing it: {}", banner(&scope)?);
    print!("{}", fs::read_to_string(&log)?);
    Ok(())
}
