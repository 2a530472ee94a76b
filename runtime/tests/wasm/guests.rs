//! Test guests, written in WAT and assembled here (the `wat` crate: no toolchain needed).
//!
//! Most are one template: the output is `prefix` + (the input, when echoing) + `suffix`, after
//! `body` (extra instructions at the start of `hookpoint_call`) ran. `fields` adds module fields
//! (imports, globals, exports).

/// A guest built from the template.
#[derive(Default, Clone)]
pub struct Guest {
    pub prefix: String,
    pub echo: bool,
    pub suffix: String,
    pub body: String,
    pub fields: String,
}

/// Where the template keeps its strings, and where the input buffer starts.
const PREFIX_AT: usize = 16;
const SUFFIX_AT: usize = 2048;
const INPUT_AT: usize = 8192;

impl Guest {
    /// Always answers `output`, whatever the input.
    pub fn answer(output: &str) -> Guest {
        Guest {
            prefix: output.to_owned(),
            ..Guest::default()
        }
    }

    /// Answers `prefix` + the whole input + `suffix`.
    pub fn echo(prefix: &str, suffix: &str) -> Guest {
        Guest {
            prefix: prefix.to_owned(),
            echo: true,
            suffix: suffix.to_owned(),
            ..Guest::default()
        }
    }

    /// Runs `body` first (then answers as before).
    pub fn with_body(mut self, body: &str) -> Guest {
        self.body = body.to_owned();
        self
    }

    /// Adds module fields.
    pub fn with_fields(mut self, fields: &str) -> Guest {
        self.fields.push_str(fields);
        self
    }

    /// The module's text.
    pub fn wat(&self) -> String {
        assert!(self.prefix.len() < SUFFIX_AT - PREFIX_AT && self.suffix.len() < 2048);
        let (p, s) = (self.prefix.len(), self.suffix.len());
        let echo = if self.echo {
            "(memory.copy (local.get $at) (local.get $ptr) (local.get $len))
             (local.set $at (i32.add (local.get $at) (local.get $len)))"
        } else {
            ""
        };
        format!(
            r#"(module
  {fields}
  (memory (export "memory") 1)
  (data (i32.const {PREFIX_AT}) "{prefix}")
  (data (i32.const {SUFFIX_AT}) "{suffix}")
  (func (export "hookpoint_alloc") (param $len i32) (result i32)
    (local $need i32)
    ;; the input, then room for the output: twice the input plus the strings
    (local.set $need (i32.add (i32.const {need}) (i32.mul (local.get $len) (i32.const 2))))
    (if (i32.gt_u (local.get $need) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow
        (i32.sub (i32.add (i32.div_u (local.get $need) (i32.const 65536)) (i32.const 1)) (memory.size))))))
    (i32.const {INPUT_AT}))
  (func (export "hookpoint_call") (param $ptr i32) (param $len i32) (result i64)
    (local $out i32) (local $at i32)
    {body}
    (local.set $out (i32.add (local.get $ptr) (local.get $len)))
    (local.set $at (local.get $out))
    (memory.copy (local.get $at) (i32.const {PREFIX_AT}) (i32.const {p}))
    (local.set $at (i32.add (local.get $at) (i32.const {p})))
    {echo}
    (memory.copy (local.get $at) (i32.const {SUFFIX_AT}) (i32.const {s}))
    (local.set $at (i32.add (local.get $at) (i32.const {s})))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $at) (local.get $out))))))"#,
            fields = self.fields,
            prefix = escape(&self.prefix),
            suffix = escape(&self.suffix),
            need = INPUT_AT + 4096 + p + s,
            body = self.body,
        )
    }

    /// The module's binary form.
    pub fn wasm(&self) -> Vec<u8> {
        wat::parse_str(self.wat()).expect("test guest assembles")
    }
}

/// A WAT string literal's content for `s`.
pub fn escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' => format!("\\{}", b as char),
            0x20..=0x7e => (b as char).to_string(),
            _ => format!("\\{b:02x}"),
        })
        .collect()
}

/// Counts its calls in a global and answers `{"payload": {"n": <count>, "text": ""}}` (the
/// digit is written over the prefix in memory, so a fresh instance always says 1). With
/// `keep_state` it exports `hookpoint_keep_state`.
pub fn counter(keep_state: bool) -> Guest {
    let keep = if keep_state {
        r#"(global (export "hookpoint_keep_state") i32 (i32.const 1))"#
    } else {
        ""
    };
    let prefix = r#"{"payload":{"n":0"#;
    let digit_at = PREFIX_AT + prefix.len() - 1;
    Guest {
        prefix: prefix.to_owned(),
        suffix: r#","text":""}}"#.to_owned(),
        body: format!(
            "(global.set $count (i32.add (global.get $count) (i32.const 1)))
             (i32.store8 (i32.const {digit_at}) (i32.add (i32.const 48) (global.get $count)))"
        ),
        fields: format!("(global $count (mut i32) (i32.const 0)) {keep}"),
        ..Guest::default()
    }
}

/// Reads `path` with `hookpoint::read_file` and answers `{"payload": {"n": 1, "text": <the
/// content>}}`, or `{"error": "read_file answered <code>"}` for a negative code.
pub fn reader(path: &str) -> String {
    let n = path.len();
    format!(
        r#"(module
  (import "hookpoint" "read_file" (func $read_file (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{path}")
  (data (i32.const 1024) "{{\"error\":\"read_file answered -0\"}}")
  (data (i32.const 2048) "{{\"payload\":{{\"n\":1,\"text\":\"")
  (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "hookpoint_call") (param $ptr i32) (param $len i32) (result i64)
    (local $rc i64)
    ;; the content goes right after the output's prefix (26 bytes at 4096)
    (memory.copy (i32.const 4096) (i32.const 2048) (i32.const 26))
    (local.set $rc (call $read_file (i32.const 16) (i32.const {n}) (i32.const 4122) (i32.const 2000)))
    (if (i64.lt_s (local.get $rc) (i64.const 0))
      (then
        ;; the digit of the code, over the 0 of "-0"
        (i32.store8 (i32.const 1054) (i32.sub (i32.const 48) (i32.wrap_i64 (local.get $rc))))
        (return (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 33)))))
    (i32.store8 (i32.add (i32.const 4122) (i32.wrap_i64 (local.get $rc))) (i32.const 34))
    (i32.store8 (i32.add (i32.const 4123) (i32.wrap_i64 (local.get $rc))) (i32.const 125))
    (i32.store8 (i32.add (i32.const 4124) (i32.wrap_i64 (local.get $rc))) (i32.const 125))
    (i64.or (i64.shl (i64.const 4096) (i64.const 32))
            (i64.add (local.get $rc) (i64.const 29)))))"#,
        path = escape(path)
    )
}

/// `count` functions that nobody calls, each with a small body: a module that takes long to
/// compile (every function is compiled, called or not).
pub fn many_functions(count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "(func $f{i} (param $x i32) (result i32)
                   (i32.add (i32.mul (local.get $x) (i32.const {i})) (i32.xor (local.get $x) (i32.const 7))))\n"
            )
        })
        .collect()
}
