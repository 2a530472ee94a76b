;; A wasm extension (hookpoint's `wasm` feature; ignored without it): on `system_prompt`, appends
;; one section to the prompt's `parts`. WebAssembly text, compiled when the folder loads and
;; cached; it runs in-process, sandboxed, in microseconds. See the README's "WebAssembly
;; extensions" for the guest interface.
;;
;; Input:  {"point": "system_prompt", "extension": "policy", "payload": {"agent_name": ..., "parts": [...], ...}}
;; Output: {"payload": <the same payload with one more part>}
(module
  (memory (export "memory") 1)
  (data (i32.const 16) "\"payload\":")       ;; 10 bytes
  (data (i32.const 32) "\"parts\":[")        ;; 9 bytes
  (data (i32.const 48) "{\"payload\":")      ;; 11 bytes
  (data (i32.const 64) "\"Policy (a wasm extension): ask before any command that deletes or overwrites files.\"")
  (global $section_len i32 (i32.const 85))

  ;; The input goes at 1024; memory grows to hold it and the answer (at most input + 4 KiB).
  (func (export "hookpoint_alloc") (param $len i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.add (i32.div_u (i32.add (i32.mul (local.get $len) (i32.const 2)) (i32.const 8192))
                                          (i32.const 65536))
                               (i32.const 1)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
              (then (return (i32.const 0))))))
    (i32.const 1024))

  ;; The index of `needle` in `hay`, or -1.
  (func $find (param $hay i32) (param $hay_len i32) (param $needle i32) (param $needle_len i32) (result i32)
    (local $i i32) (local $j i32)
    (block $not_found
      (loop $next
        (br_if $not_found (i32.gt_s (local.get $i) (i32.sub (local.get $hay_len) (local.get $needle_len))))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $compare
            (if (i32.eq (local.get $j) (local.get $needle_len)) (then (return (local.get $i))))
            (br_if $mismatch
              (i32.ne (i32.load8_u (i32.add (local.get $hay) (i32.add (local.get $i) (local.get $j))))
                      (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $compare)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const -1))

  ;; The address of the `]` closing the array whose first element is at `at` (strings skipped).
  (func $array_end (param $at i32) (param $limit i32) (result i32)
    (local $c i32) (local $in i32)
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $at) (local.get $limit)))
        (local.set $c (i32.load8_u (local.get $at)))
        (if (local.get $in)
          (then
            (if (i32.eq (local.get $c) (i32.const 92))            ;; backslash: skip the next byte
              (then (local.set $at (i32.add (local.get $at) (i32.const 1)))))
            (if (i32.eq (local.get $c) (i32.const 34)) (then (local.set $in (i32.const 0)))))
          (else
            (if (i32.eq (local.get $c) (i32.const 34)) (then (local.set $in (i32.const 1))))
            (br_if $done (i32.eq (local.get $c) (i32.const 93)))))   ;; ]
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $scan)))
    (local.get $at))

  (func $copy (param $to i32) (param $from i32) (param $len i32) (result i32)
    (memory.copy (local.get $to) (local.get $from) (local.get $len))
    (i32.add (local.get $to) (local.get $len)))

  (func (export "hookpoint_call") (param $ptr i32) (param $len i32) (result i64)
    (local $payload i32) (local $parts i32) (local $first i32) (local $end i32) (local $out i32) (local $at i32)
    (local.set $payload (call $find (local.get $ptr) (local.get $len) (i32.const 16) (i32.const 10)))
    (if (i32.lt_s (local.get $payload) (i32.const 0)) (then (return (i64.const 0))))
    ;; the payload value starts after "payload": and ends before the input's last byte
    (local.set $payload (i32.add (local.get $ptr) (i32.add (local.get $payload) (i32.const 10))))
    (local.set $parts (call $find (local.get $payload) (i32.sub (i32.add (local.get $ptr) (local.get $len)) (local.get $payload))
                                  (i32.const 32) (i32.const 9)))
    (if (i32.lt_s (local.get $parts) (i32.const 0)) (then (return (i64.const 0))))
    (local.set $first (i32.add (local.get $payload) (i32.add (local.get $parts) (i32.const 9))))
    (local.set $end (call $array_end (local.get $first) (i32.add (local.get $ptr) (local.get $len))))
    ;; {"payload": + the payload up to the ] + [","] + the section + the rest (with the input's last })
    (local.set $out (i32.add (local.get $ptr) (local.get $len)))
    (local.set $at (call $copy (local.get $out) (i32.const 48) (i32.const 11)))
    (local.set $at (call $copy (local.get $at) (local.get $payload) (i32.sub (local.get $end) (local.get $payload))))
    (if (i32.ne (local.get $end) (local.get $first))
      (then (i32.store8 (local.get $at) (i32.const 44))
            (local.set $at (i32.add (local.get $at) (i32.const 1)))))
    (local.set $at (call $copy (local.get $at) (i32.const 64) (global.get $section_len)))
    (local.set $at (call $copy (local.get $at) (local.get $end)
                              (i32.sub (i32.add (local.get $ptr) (local.get $len)) (local.get $end))))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $at) (local.get $out))))))
