//! Before a hook starts: the environment it will see, and which program `argv[0]` names.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::{CommandError, CommandSpec, ENV_ALLOW_LIST};

/// Everything needed to start the hook, computed before anything runs.
pub(super) struct Prepared {
    pub(super) program: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) env: Vec<(OsString, OsString)>,
}

impl Prepared {
    /// The hook's process, not yet started: `argv[1..]`, the working folder, the cleared and
    /// rebuilt environment, three pipes and a process group of its own (so a timeout can kill
    /// whatever the hook started).
    pub(super) fn command(&self, spec: &CommandSpec) -> std::process::Command {
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;

        let mut command = std::process::Command::new(&self.program);
        command
            .args(spec.argv.iter().skip(1))
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        command
    }
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
    Ok(Prepared { program, cwd, env })
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
