;; A complete hookpoint guest (guest interface version 1), in WebAssembly text.
;;
;; On a payload whose "status" is "pending" it answers {"payload": ...} with the status
;; "allowed"; on any other payload it answers nothing (= {}, the payload is left as it was).
;; It works on the bytes of the input JSON, so it needs no allocator and no JSON library.
(module
  (memory (export "memory") 1)
  (data (i32.const 16) "\"status\":\"pending\"")   ;; 18 bytes
  (data (i32.const 64) "\"payload\":")             ;; 10 bytes
  (data (i32.const 80) "allowed")                   ;; 7 bytes

  ;; The host asks for a buffer for `len` bytes of input: it is at 1024, memory grows to fit.
  (func (export "hookpoint_alloc") (param $len i32) (result i32)
    (local $pages i32)
    (local.set $pages
      (i32.add (i32.div_u (i32.add (local.get $len) (i32.const 1024)) (i32.const 65536)) (i32.const 1)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then (return (i32.const 0))))))
    (i32.const 1024))

  ;; The index of `needle` in `hay`, or -1.
  (func $find (param $hay i32) (param $hay_len i32) (param $needle i32) (param $needle_len i32)
              (result i32)
    (local $i i32) (local $j i32)
    (block $not_found
      (loop $next
        (br_if $not_found
          (i32.gt_s (local.get $i) (i32.sub (local.get $hay_len) (local.get $needle_len))))
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

  ;; One call: the input {"point": ..., "extension": ..., "payload": {...}} is at ptr..ptr+len;
  ;; the answer is (out_ptr << 32) | out_len.
  (func (export "hookpoint_call") (param $ptr i32) (param $len i32) (result i64)
    (local $p i32) (local $s i32) (local $start i32)
    ;; "payload" is the input's last key.
    (local.set $p (call $find (local.get $ptr) (local.get $len) (i32.const 64) (i32.const 10)))
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i64.const 0))))
    (local.set $s (call $find (i32.add (local.get $ptr) (local.get $p)) (i32.sub (local.get $len) (local.get $p))
                              (i32.const 16) (i32.const 18)))
    (if (i32.lt_s (local.get $s) (i32.const 0)) (then (return (i64.const 0))))
    ;; "pending" becomes "allowed" in place (10 bytes past the match: "status":").
    (memory.copy (i32.add (i32.add (local.get $ptr) (local.get $p)) (i32.add (local.get $s) (i32.const 10)))
                 (i32.const 80) (i32.const 7))
    ;; The comma before "payload" becomes "{": the answer {"payload":{...}} is the input's tail.
    (local.set $start (i32.sub (i32.add (local.get $ptr) (local.get $p)) (i32.const 1)))
    (i32.store8 (local.get $start) (i32.const 123))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (i32.add (local.get $ptr) (local.get $len)) (local.get $start))))))
