//! Before a hook starts: the environment it will see, and which program `argv[0]` names.

use std::ffi::{CString, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{CommandError, CommandSpec, ENV_ALLOW_LIST, HeldFolder};

/// Everything needed to start the hook, computed before anything runs.
pub(super) struct Prepared {
    /// The program as resolved, for messages.
    pub(super) program: PathBuf,
    /// What the child executes: `program`, or a path relative to the held folder.
    run: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) env: Vec<(OsString, OsString)>,
    held: Option<Enter>,
}

/// How the child enters a held folder: by its handle, then into `cwd` below it.
struct Enter {
    handle: Arc<std::fs::File>,
    below: Option<CString>,
}

impl Prepared {
    /// The hook's process, not yet started: `argv[1..]`, the working folder, the cleared and
    /// rebuilt environment, three pipes and a process group of its own (so a timeout can kill
    /// whatever the hook started).
    pub(super) fn command(&self, spec: &CommandSpec) -> std::process::Command {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;

        let mut command = std::process::Command::new(&self.run);
        command
            .args(spec.argv.iter().skip(1))
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        match &self.held {
            None => {
                command.current_dir(&self.cwd);
            }
            Some(enter) => {
                let (handle, below) = (Arc::clone(&enter.handle), enter.below.clone());
                // SAFETY: the closure runs in the child between fork and exec, where only
                // async-signal-safe calls are allowed: it calls `fchdir` on a descriptor this
                // process keeps open (the closure owns `handle`) and `chdir` on a C string built
                // before the fork; it allocates nothing (`last_os_error` only reads errno).
                unsafe {
                    command.pre_exec(move || {
                        if libc::fchdir(handle.as_raw_fd()) != 0 {
                            return Err(io::Error::last_os_error());
                        }
                        if let Some(dir) = &below
                            && libc::chdir(dir.as_ptr()) != 0
                        {
                            return Err(io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
            }
        }
        command
    }
}

/// For a spec that holds its folder: how the child enters `cwd` through the handle, and the
/// program by a path relative to `cwd` when it lies in the held folder (else as resolved).
fn through_held(held: &HeldFolder, cwd: &Path, program: &Path) -> io::Result<(Enter, PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let below = cwd.strip_prefix(&held.path).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the working folder {} is not in the held folder {}",
                cwd.display(),
                held.path.display()
            ),
        )
    })?;
    let run = if let Ok(inside_cwd) = program.strip_prefix(cwd) {
        Path::new(".").join(inside_cwd)
    } else if let Ok(inside) = program.strip_prefix(&held.path) {
        let mut run = PathBuf::from(".");
        run.extend(below.components().map(|_| ".."));
        run.push(inside);
        run
    } else {
        program.to_path_buf()
    };
    let below = if below.as_os_str().is_empty() {
        None
    } else {
        Some(CString::new(below.as_os_str().as_bytes())?)
    };
    let enter = Enter {
        handle: Arc::clone(&held.handle),
        below,
    };
    Ok((enter, run))
}

pub(super) fn prepare(spec: &CommandSpec) -> Result<Prepared, CommandError> {
    let Some(argv0) = spec.argv.first() else {
        return Err(CommandError::CouldNotStart {
            program: PathBuf::new(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "argv is empty"),
        });
    };
    let could_not_start =
        |program: PathBuf, source: io::Error| CommandError::CouldNotStart { program, source };

    // The environment the hook will see: allow-list, then spec.env in order.
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for name in ENV_ALLOW_LIST {
        if let Some(value) = std::env::var_os(name) {
            env.push((OsString::from(name), value));
        }
    }
    for (name, value) in &spec.env {
        let name = OsString::from(name);
        env.retain(|(existing, _)| *existing != name);
        env.push((name, OsString::from(value)));
    }

    let cwd = std::path::absolute(&spec.cwd)
        .map_err(|source| could_not_start(PathBuf::from(argv0), source))?;
    let program = if has_slash(argv0) {
        // Absolute so that the child's chdir cannot change its meaning.
        cwd.join(argv0)
    } else {
        let path_var = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.as_os_str());
        search_path(argv0, path_var).ok_or_else(|| {
            could_not_start(
                PathBuf::from(argv0),
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{:?} is not an executable file in any absolute PATH entry",
                        argv0
                    ),
                ),
            )
        })?
    };
    let (held, run) = match &spec.held {
        None => (None, program.clone()),
        Some(held) => {
            let (enter, run) = through_held(held, &cwd, &program)
                .and_then(|(enter, run)| {
                    stays_in_held(held, &enter, &run, &spec.argv[1..])?;
                    Ok((enter, run))
                })
                .map_err(|source| could_not_start(program.clone(), source))?;
            (Some(enter), run)
        }
    };
    Ok(Prepared {
        program,
        run,
        cwd,
        env,
        held,
    })
}

/// Refuses a command of a held folder whose program, or an argument naming a file there (a
/// script given to an interpreter), resolves outside the folder through a symlink in it: code
/// from outside the folder never runs as the folder's. Paths are resolved through the folder's
/// handle, so a folder moved or replaced since it was checked is not looked at. (A symlink
/// swapped in between this check and the start needs write access inside the folder, which
/// could as well rewrite its scripts.)
fn stays_in_held(
    held: &HeldFolder,
    enter: &Enter,
    run: &Path,
    args: &[OsString],
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let by_handle = PathBuf::from(format!("/proc/self/fd/{}", held.handle.as_raw_fd()));
    let Ok(folder) = std::fs::canonicalize(&by_handle) else {
        // No `/proc`: the child still enters the folder by its handle.
        return Ok(());
    };
    let cwd = match &enter.below {
        Some(below) => {
            use std::os::unix::ffi::OsStrExt;
            by_handle.join(std::ffi::OsStr::from_bytes(below.as_bytes()))
        }
        None => by_handle,
    };
    let words = std::iter::once(run.as_os_str()).chain(args.iter().map(OsString::as_os_str));
    for word in
        words.filter(|w| !Path::new(w).is_absolute() || Path::new(w).starts_with(&held.path))
    {
        let path = match Path::new(word).strip_prefix(&held.path) {
            Ok(inside) => folder.join(inside),
            Err(_) => cwd.join(word),
        };
        if std::fs::symlink_metadata(&path).is_err() {
            continue; // names no file: a plain argument
        }
        let real = std::fs::canonicalize(&path)?;
        if !real.starts_with(&folder) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is a symlink leaving the folder {}: resolves to {}; refused",
                    Path::new(word).display(),
                    held.path.display(),
                    real.display()
                ),
            ));
        }
    }
    Ok(())
}

fn has_slash(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().contains(&b'/')
}

/// First `dir/name` over the absolute entries of `path_var` that is an
/// executable regular file.
fn search_path(name: &std::ffi::OsStr, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Makes the confusing `ENOENT` that `execve` reports for a missing `#!`
/// interpreter say so.
/// The pauses, in milliseconds, between attempts to start a program the kernel refused with
/// `ETXTBSY` (about 0.4 s in all). Linux refuses to execute a file while any process holds it open
/// for writing, and a file written by this process a moment ago is held so by every child another
/// thread forks before that child execs (the write descriptor is inherited until `exec` closes
/// it): the refusal ends by itself within microseconds to milliseconds.
pub(super) const BUSY_PAUSES_MS: [u64; 8] = [1, 2, 5, 10, 20, 50, 100, 200];

/// Whether a start failed only because the program is briefly open for writing somewhere.
pub(super) fn is_busy(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::ExecutableFileBusy
}

/// Starts a process with `spawn`, again after each of [`BUSY_PAUSES_MS`] while it is refused
/// with `ETXTBSY` (blocking the thread in between).
pub(super) fn spawn_blocking_retrying<C>(
    mut spawn: impl FnMut() -> io::Result<C>,
) -> io::Result<C> {
    for pause in BUSY_PAUSES_MS {
        match spawn() {
            Err(err) if is_busy(&err) => {
                std::thread::sleep(std::time::Duration::from_millis(pause))
            }
            done => return done,
        }
    }
    spawn()
}

pub(super) fn explain_spawn_error(program: &Path, err: io::Error) -> io::Error {
    if err.kind() == io::ErrorKind::NotFound && program.is_file() {
        let interpreter = shebang(program).unwrap_or_else(|| "?".to_owned());
        return io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the program exists but its #! interpreter {interpreter:?} was not found ({err})"
            ),
        );
    }
    err
}

/// The `#!` line of `program` (without `#!`), if it has one.
fn shebang(program: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let file = std::fs::File::open(program).ok()?;
    let n = file.take(head.len() as u64).read(&mut head).ok()?;
    let line = head.get(..n)?.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    Some(String::from_utf8_lossy(line).trim().to_owned())
}
