//! `--watch`: hot reload shown live. The demo edits an override file itself, then removes the
//! `welcome` folder plugin and puts it back, waiting each time for the watcher's new snapshot and
//! showing what changed; then it keeps watching until Ctrl-C (or `--watch-seconds`).

use std::time::Duration;

use hookpoint::{ReloadEvent, Scope};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::stage::{Staged, copy_dir};

fn extensions(scope: &Scope, point: &str) -> Vec<String> {
    scope.snapshot().extension_names(point)
}

fn welcome_state(scope: &Scope) -> String {
    scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "welcome")
        .map_or_else(
            || "removed (uninstalled; its extensions left the snapshot)".to_owned(),
            |p| crate::describe_plugin(&p),
        )
}

/// Waits (up to 5 s in all) for a reload after which `done` holds; says so if none came.
async fn reload_until(
    rx: &mut UnboundedReceiver<ReloadEvent>,
    mut done: impl FnMut() -> bool,
) -> Option<ReloadEvent> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while let Ok(Some(event)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        if done() {
            return Some(event);
        }
    }
    println!("--watch: the expected reload was not seen within 5 s");
    None
}

/// An editor's save: write a temporary file, rename it over the target.
fn save(file: &std::path::Path, text: &str) -> std::io::Result<()> {
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, file)
}

/// Enables the compiled-in `signature_footer` by editing its override file.
async fn edit_override(
    scope: &Scope,
    staged: &Staged,
    rx: &mut UnboundedReceiver<ReloadEvent>,
) -> std::io::Result<()> {
    println!(
        "\n--watch: system_prompt runs {:?}",
        extensions(scope, "system_prompt")
    );
    let file = staged
        .project
        .join("extensions/system_prompt/signature_footer.json");
    println!(
        "--watch: writing {{\"enabled\": true}} to {} (an editor save)",
        file.display()
    );
    save(&file, "{\"enabled\": true}\n")?;
    let footer_runs =
        || extensions(scope, "system_prompt").contains(&"signature_footer".to_owned());
    if let Some(event) = reload_until(rx, footer_runs).await {
        println!(
            "--watch: reloaded (generation {}), system_prompt now runs {:?}",
            event.generation,
            extensions(scope, "system_prompt")
        );
    }
    Ok(())
}

/// Removes the `welcome` folder plugin (uninstalled live), then copies it back (installed).
async fn remove_and_reinstall_plugin(
    scope: &Scope,
    staged: &Staged,
    rx: &mut UnboundedReceiver<ReloadEvent>,
) -> std::io::Result<()> {
    let folder = staged.plugins.join("welcome");
    println!(
        "--watch: plugin {}; banners runs {:?}",
        welcome_state(scope),
        extensions(scope, "banners")
    );
    println!(
        "--watch: moving {} out of the plugin root",
        folder.display()
    );
    // One rename: the watcher sees the whole folder leave at once.
    let removed = staged.plugins.with_file_name("welcome.removed");
    std::fs::rename(&folder, &removed)?;
    std::fs::remove_dir_all(&removed)?;
    let welcome_runs = || extensions(scope, "banners").contains(&"welcome".to_owned());
    if let Some(event) = reload_until(rx, || !welcome_runs()).await {
        println!(
            "--watch: reloaded (generation {}): plugin welcome {}; banners runs {:?}",
            event.generation,
            welcome_state(scope),
            extensions(scope, "banners")
        );
    }
    println!(
        "--watch: copying it back from {}",
        Staged::shipped_plugin("welcome").display()
    );
    // Copy beside the root, then rename in: the watcher sees one complete folder arrive.
    let incoming = staged.plugins.with_file_name("welcome.incoming");
    copy_dir(&Staged::shipped_plugin("welcome"), &incoming)?;
    std::fs::rename(&incoming, &folder)?;
    if let Some(event) = reload_until(rx, welcome_runs).await {
        println!(
            "--watch: reloaded (generation {}): plugin {}; banners runs {:?}",
            event.generation,
            welcome_state(scope),
            extensions(scope, "banners")
        );
    }
    Ok(())
}

pub async fn watch_demo(
    scope: &Scope,
    staged: &Staged,
    seconds: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    scope.on_reload(move |event| {
        let _ = tx.send(event.clone());
    });
    edit_override(scope, staged, &mut rx).await?;
    remove_and_reinstall_plugin(scope, staged, &mut rx).await?;
    println!(
        "--watch: edit files under {} or {} to see them applied; Ctrl-C to stop",
        staged.project.join("extensions").display(),
        staged.plugins.display()
    );
    let deadline =
        (seconds > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(seconds));
    loop {
        let next = async {
            match deadline {
                Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                None => tokio::select! {
                    e = rx.recv() => e,
                    _ = tokio::signal::ctrl_c() => None,
                },
            }
        };
        let Some(event) = next.await else { break };
        println!(
            "--watch: reloaded (generation {}): system_prompt runs {:?}; plugin {}",
            event.generation,
            extensions(scope, "system_prompt"),
            welcome_state(scope)
        );
        for p in &event.problems {
            println!("--watch:   problem (last good version kept): {p}");
        }
    }
    Ok(())
}
