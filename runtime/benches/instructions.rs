//! Instruction counts of the dispatch benchmark's cases, for callgrind: deterministic where
//! criterion's times drift. `instructions CASE N` runs every case once (warming the default scope
//! and the call sites), then the case named `group/name` N times; the difference between two
//! runs' totals divided by the difference of their N is the instructions one run of the case
//! takes, setup and the warm-up cancelling out. `instructions --list` prints the case names.
//! `benches/instructions.sh` runs it under callgrind and prints the table.

use std::hint::black_box;

mod cases;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; a plain run lists the cases.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--bench"))
        .collect();
    match args.as_slice() {
        [case, n] => {
            let n: u64 = n.parse().expect("N is a count");
            cases::check();
            let case = cases::CASES
                .iter()
                .find(|c| format!("{}/{}", c.group, c.name) == *case)
                .unwrap_or_else(|| panic!("no case {case}; see --list"));
            for _ in 0..n {
                black_box((case.run)());
            }
        }
        _ => {
            for case in cases::CASES {
                let baseline = case.baseline.map_or(String::new(), |b| format!(" vs {b}"));
                println!("{}/{}{baseline}", case.group, case.name);
            }
        }
    }
}
