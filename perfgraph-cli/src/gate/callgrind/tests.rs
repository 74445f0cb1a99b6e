//! The reader against hand-written files (the format's own examples, compression, recursion, several
//! events, several parts), against every prefix and random mutations of a file as callgrind writes it
//! (one line of error or the same profile; never a panic), and sections found in it.

use super::*;

/// A file as valgrind 3.19's callgrind writes it for a release build (no line numbers): `main` calls
/// `single`, `double` (twice `single`'s loop), `fact` (recursive: callgrind calls its inner calls
/// `fact'2`) and `malloc` in libc.
const SAMPLE: &str = "# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 20120
cmd:  ./target/release/prog
part: 1


desc: I1 cache: 
desc: Timerange: Basic block 0 - 4066797
desc: Trigger: Program termination

positions: line
events: Ir
summary: 1735


ob=(1) /tmp/prog
fl=(1) ???
fn=(1) prog::main
0 20
cfn=(2) prog::single
calls=1 0 
0 500
cfn=(3) prog::double
calls=1 0 
0 1000
cfn=(4) prog::fact
calls=1 0 
0 181
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(2) ./malloc/./malloc/malloc.c
cfn=(5) malloc
calls=2 3281 
0 30
0 4

fn=(2)
0 500

fn=(3)
0 1000

fn=(4)
0 9
cfn=(6) prog::fact'2
calls=1 0 
0 168
0 4

fn=(6)
0 120
cfn=(6)
calls=9 0 
0 900
0 48

ob=(2)
fl=(2)
fn=(5)
0 30

totals: 1735
";

/// The format manual's extended example, without and with name compression.
const EXAMPLE: &str = "events: Instructions Ir

fl=file1.c
fn=main
16 20 20
cfn=func1
calls=1 50
16 400 400
cfi=file2.c
cfn=func2
calls=3 20
16 400 400

fn=func1
51 100 100
cfi=file2.c
cfn=func2
calls=2 20
51 300 300

fl=file2.c
fn=func2
20 700 700
";

const COMPRESSED: &str = "events: Instructions Ir

fl=(1) file1.c
fn=(1) main
16 20 20
cfn=(2) func1
calls=1 50
16 400 400
cfi=(2) file2.c
cfn=(3) func2
calls=3 20
16 400 400

fn=(2)
51 100 100
cfi=(2)
cfn=(3)
calls=2 20
51 300 300

fl=(2)
fn=(3)
20 700 700
";

/// The same, its names defined before any cost line (`fn=` lines that only name).
const DEFINED_FIRST: &str = "events: Instructions Ir
fl=(1) file1.c
fl=(2) file2.c
fn=(1) main
fn=(2) func1
fn=(3) func2

fl=(1)
fn=(1)
16 20 20
cfn=(2)
calls=1 50
16 400 400
cfi=(2)
cfn=(3)
calls=3 20
16 400 400
fn=(2)
51 100 100
cfi=(2)
cfn=(3)
calls=2 20
51 300 300
fl=(2)
fn=(3)
20 700 700
";

fn parse(text: &str) -> Result<Profile, String> {
    read(text.as_bytes())
}

fn get<'a>(profile: &'a Profile, name: &str) -> &'a Function {
    profile
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name}: {profile:#?}"))
}

fn costs_of(profile: &Profile, name: &str) -> (u64, u64) {
    let f = get(profile, name);
    (f.inclusive, f.self_cost)
}

#[test]
fn inclusive_costs_add_the_calls() {
    let p = parse(EXAMPLE).unwrap();
    assert_eq!(p.total, 820);
    assert_eq!(costs_of(&p, "main"), (820, 20));
    assert_eq!(costs_of(&p, "func1"), (400, 100));
    assert_eq!(costs_of(&p, "func2"), (700, 700));
    assert_eq!(p.functions.len(), 3);
    let calls: Vec<_> = p
        .calls
        .iter()
        .map(|c| (c.caller, c.callee, c.count, c.inclusive))
        .collect();
    assert_eq!(calls, [(0, 1, 1, 400), (0, 2, 3, 400), (1, 2, 2, 300)]);
}

#[test]
fn name_compression_reads_as_the_names() {
    let plain = parse(EXAMPLE).unwrap();
    assert_eq!(parse(COMPRESSED).unwrap(), plain);
    assert_eq!(parse(DEFINED_FIRST).unwrap(), plain);
}

#[test]
fn callgrind_sample() {
    let p = parse(SAMPLE).unwrap();
    assert_eq!(p.total, 1735);
    assert_eq!(costs_of(&p, "prog::main"), (1735, 24));
    assert_eq!(costs_of(&p, "prog::double"), (1000, 1000));
    assert_eq!(
        costs_of(&p, "malloc"),
        (30, 30),
        "the call's cob=/cfi= name the function defined later"
    );
    // The recursion: fact'2's call to itself (900, its inner calls' inclusive costs summed) is in its self
    // cost already.
    assert_eq!(costs_of(&p, "prog::fact"), (181, 13));
    assert_eq!(costs_of(&p, "prog::fact'2"), (168, 168));
    assert_eq!(p.functions.len(), 6);
}

#[test]
fn recursion_is_not_added_twice() {
    let text = "events: Ir\nfn=walk\n1 100\ncfn=leaf\ncalls=3 9\n1 60\ncfn=walk\ncalls=9 1\n1 5000\n\
                fn=leaf\n9 60\n";
    let p = parse(text).unwrap();
    assert_eq!(costs_of(&p, "walk"), (160, 100));
    assert_eq!(
        p.calls
            .iter()
            .find(|c| c.caller == c.callee)
            .map(|c| (c.count, c.inclusive)),
        Some((9, 5000))
    );
}

#[test]
fn relative_positions() {
    let text = "positions: instr line\nevents: Ir\nfn=f\n0x80001234 90 1\n+3 * 5\n+1 +1 6\n-4 -1 2\n\
                cfn=g\ncalls=2 0x80002000 20\n* * 100\n+2 * 3\nfn=g\n0x80002000 20 100\n";
    let p = parse(text).unwrap();
    assert_eq!(costs_of(&p, "f"), (117, 17));
    assert_eq!(p.total, 117);
    // No positions at all (callgrind's `--dump-line=no`).
    let p = parse("positions:\nevents: Ir\nfn=f\n7\ncfn=g\ncalls=1\n3\n").unwrap();
    assert_eq!(costs_of(&p, "f"), (10, 7));
}

#[test]
fn the_ir_column_wherever_it_is() {
    let text = "events: Dr Ir Dw\nfl=a.c\nfn=f\n16 5 20 7\n17 1\n18 0 3\ncfn=g\ncalls=1 4\n16 9 400 2\n\
                fn=g\n4 9 400 2\ntotals: 15 423 9\n";
    let p = parse(text).unwrap();
    assert_eq!(costs_of(&p, "f"), (423, 23));
    assert_eq!(p.total, 423);
}

#[test]
fn totals_summary_or_the_sum() {
    let body = "events: Ir\nfn=f\n1 10\n2 5\n";
    assert_eq!(parse(body).unwrap().total, 15);
    assert_eq!(parse(&format!("{body}totals: 15\n")).unwrap().total, 15);
    let e = parse(&format!("{body}totals: 16\n")).unwrap_err();
    assert!(
        e.contains("`totals:` says 16 Ir, the cost lines sum to 15"),
        "{e}"
    );
    // A summary may be larger than the cost lines (not all of the run's cost in them).
    assert_eq!(
        parse(&format!("events: Ir\nsummary: 20\n{}", &body[11..]))
            .unwrap()
            .total,
        20
    );
    assert!(parse(&format!("events: Ir\nsummary: 14\n{}", &body[11..])).is_err());
    // callgrind writes `totals:` last: without it, its file was cut short.
    let e = parse(&format!(
        "creator: callgrind-3.19.0\nevents: Ir\nsummary: 15\n{}",
        &body[11..]
    ))
    .unwrap_err();
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn several_parts_and_jumps() {
    let part = |n: u64| {
        format!(
            "part: {n}\npositions: instr line\nevents: Ir\nsummary: {}\nfl=(1) a.c\njfi=(9) b.c\njfn=(9) g\n\
             fn=(1) f\n0x10 3 {n}\njump=3 +2 *\n+2 *\njcnd=5/2 -3 +1\n* *\ncfi=(9)\ncfn=(9)\ncalls=1 0x40 7\n\
             * * 2\nfl=(9)\nfn=(9)\n0x40 7 2\ntotals: {}\n",
            n + 2,
            n + 2
        )
    };
    let p = parse(&format!(
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n{}{}",
        part(1),
        part(2)
    ))
    .unwrap();
    assert_eq!(p.total, 7);
    assert_eq!(costs_of(&p, "f"), (7, 3));
    assert_eq!(costs_of(&p, "g"), (4, 4));
    assert_eq!(p.calls[0].count, 2);
}

#[test]
fn inlined_files_and_call_targets() {
    // Under `fi=`, a call's target is in that file unless `cfi=` says otherwise (as callgrind writes it).
    let text = "events: Ir\nob=prog\nfl=a.rs\nfn=f\n1 2\nfi=b.rs\n7 3\ncfn=helper\ncalls=1 4\n7 50\n\
                cfi=a.rs\ncfn=f\ncalls=2 1\n7 900\nfe=a.rs\n2 1\nfl=b.rs\nfn=helper\n4 50\n";
    let p = parse(text).unwrap();
    assert_eq!(costs_of(&p, "f"), (56, 6));
    assert_eq!(p.functions.len(), 2);
    // The same name in another file or object is another function.
    let text = "events: Ir\nfl=a.c\nfn=s\n1 1\nfl=b.c\nfn=s\n1 2\nob=lib\nfl=a.c\nfn=s\n1 4\n";
    let p = parse(text).unwrap();
    assert_eq!(
        p.functions.iter().map(|f| f.self_cost).collect::<Vec<_>>(),
        [1, 2, 4]
    );
}

#[test]
fn hash_suffixes_are_removed() {
    let text = "events: Ir\nfn=(1) prog::solve::h0123456789abcdef\n1 1\ncfn=(2) prog::fact::h0123456789abcdef'2\n\
                calls=1 1\n1 1\nfn=(2)\n1 1\nfn=prog::hello::hi\n1 1\n";
    let names: Vec<_> = parse(text)
        .unwrap()
        .functions
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["prog::solve", "prog::fact'2", "prog::hello::hi"]);
}

#[test]
fn malformed_input_is_one_line_naming_the_line() {
    let cases: &[(&str, &str)] = &[
        (
            "events: Ir\nfn=f\n0 12x\n",
            "line 3: \"12x\" is not a count",
        ),
        (
            "events: Ir\nfn=f\n0 18446744073709551616\n",
            "line 3: \"18446744073709551616\" is not a count",
        ),
        (
            "events: Ir\nfn=f\n0x 12\n",
            "line 3: \"0x\" is not a position",
        ),
        (
            "events: Ir\nfn=f\ncfn=g\ncalls=1 0\nfn=g\n0 1\n",
            "line 5: a `calls=` line not followed by its cost",
        ),
        (
            "events: Ir\nfn=f\ncfn=g\ncalls=1 0\n",
            "line 5 (end of file): the file ends after a `calls=`",
        ),
        (
            "events: Ir\nfn=f\ncfn=g\ncalls=x 0\n0 1\n",
            "line 4: `calls=` without a call count",
        ),
        (
            "events: Ir\nfn=f\ncalls=1 0\n0 1\n",
            "line 3: `calls=` without a `cfn=`",
        ),
        (
            "events: Ir\nfn=f\ncfn=g\ncalls=1 0 0\n0 1\n",
            "line 4: `calls=` with 2 target positions",
        ),
        (
            "events: Ir\nfn=(3)\n",
            "line 2: name (3) used before it is defined",
        ),
        ("events: Ir\nfn=(3 f\n", "line 2: no `)`"),
        ("events: Ir\nfn=\n", "line 2: an empty name"),
        ("events: Ir\n0 1\n", "line 2: a cost line before any `fn=`"),
        ("fn=f\n0 1\n", "line 2: a cost line before `events:`"),
        (
            "events: Dr Dw\nfn=f\n",
            "line 1: `events:` has no `Ir` column",
        ),
        (
            "events: Ir\nfn=f\n0 1 2\n",
            "line 3: more costs than the 1 events",
        ),
        (
            "positions: instr line\nevents: Ir\nfn=f\n5\n",
            "line 4: a cost line with fewer than 2 positions",
        ),
        (
            "positions: address\n",
            "line 1: unknown position \"address\"",
        ),
        (
            "events: Ir\nxyz=1\n",
            "line 2: unknown specification `\"xyz\"=`",
        ),
        ("version: 2\n", "line 1: format version \"2\""),
        (
            "events: Ir\n\0\u{1}\u{7f}garbage\n",
            "line 2: not a callgrind line",
        ),
        ("summary: 3\n", "line 1: `summary:` before `events:`"),
        (
            "# callgrind format\n",
            "line 2 (end of file): no `events:` line",
        ),
        ("", "line 1 (end of file): no `events:` line"),
    ];
    for (text, expected) in cases {
        let e = parse(text).unwrap_err();
        assert!(e.starts_with(expected), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e:?}");
    }
    let e = read(&b"events: Ir\nfn=\xff\xfe\x00\n\xff 1 2\n"[..]).unwrap_err();
    assert!(e.starts_with("line 3: not a callgrind line"), "{e}");
}

#[test]
fn huge_numbers_saturate() {
    let max = u64::MAX;
    let text = format!(
        "events: Ir\nfn=f\n0 {max}\n0 0x{max:x}\ncfn=g\ncalls={max} 0\n0 {max}\ncfn=g\ncalls=1 0\n0 1\n"
    );
    let p = parse(&text).unwrap();
    assert_eq!((p.total, costs_of(&p, "f")), (max, (max, max)));
    assert_eq!((p.calls[0].count, p.calls[0].inclusive), (max, max));
}

#[test]
fn bounds() {
    let limits = Limits {
        bytes: 100,
        line: 40,
        name: 8,
        functions: 2,
    };
    let small = |text: &str| read_with(text.as_bytes(), limits);
    assert!(small("events: Ir\nfn=f\n0 1\n").is_ok());
    let e = small(&format!("events: Ir\nfn=f\n{}", "0 1\n".repeat(30))).unwrap_err();
    assert!(e.contains("larger than 100 bytes"), "{e}");
    let e = small(&format!("events: Ir\n#{}", "x".repeat(45))).unwrap_err();
    assert_eq!(e, "line 2: longer than 40 bytes");
    assert!(small("events: Ir\nfn=(1) 12345678\n").is_ok());
    assert_eq!(
        small("events: Ir\nfn=(1) 123456789\n").unwrap_err(),
        "line 2: a name longer than 8 bytes"
    );
    let e = small("events: Ir\nfn=a\n0 1\nfn=b\n0 1\nfn=c\n0 1\n").unwrap_err();
    assert_eq!(e, "line 7: more than 2 functions");
    // The real bounds.
    let name = |len| format!("events: Ir\nfn={}\n0 1\n", "x".repeat(len));
    assert!(parse(&name(MAX_NAME)).is_ok());
    assert!(
        parse(&name(MAX_NAME + 1))
            .unwrap_err()
            .contains("a name longer than 4096 bytes")
    );
}

#[test]
fn every_prefix_is_an_error_or_the_whole() {
    let whole = parse(SAMPLE).unwrap();
    for end in 0..SAMPLE.len() {
        match parse(&SAMPLE[..end]) {
            Ok(p) => assert_eq!(
                p,
                whole,
                "prefix of {end} bytes: {:?}",
                &SAMPLE[end.saturating_sub(20)..end]
            ),
            Err(e) => assert!(e.starts_with("line ") && !e.contains('\n'), "{e}"),
        }
    }
    assert!(
        parse(&SAMPLE[..SAMPLE.len() - 1]).is_ok(),
        "the last newline is not needed"
    );
}

/// xorshift64: the same bytes every run.
fn random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn mutations_and_garbage_never_panic() {
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let alphabet = b"0123456789+-*x=():# \nfnclsobiteu'<>Ir\xff";
    for _ in 0..4000 {
        let mut bytes = SAMPLE.as_bytes().to_vec();
        for _ in 0..1 + random(&mut state) % 4 {
            let at = (random(&mut state) % bytes.len() as u64) as usize;
            let byte = alphabet[(random(&mut state) % alphabet.len() as u64) as usize];
            match random(&mut state) % 3 {
                0 => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ => _ = bytes.remove(at),
            }
        }
        if let Err(e) = read(&bytes[..]) {
            assert!(e.starts_with("line ") && !e.contains('\n'), "{e}");
        }
    }
    for _ in 0..500 {
        let len = random(&mut state) % 300;
        let bytes: Vec<u8> = (0..len).map(|_| random(&mut state) as u8).collect();
        assert!(read(&bytes[..]).is_err(), "{bytes:?}");
    }
}

#[test]
fn sections_in_a_callgrind_file() {
    let p = parse(SAMPLE).unwrap();
    assert_eq!(section(&p, "fact"), Some(181), "fact'2 is inside fact");
    assert_eq!(section(&p, "main"), Some(1735));
    assert_eq!(section(&p, "double"), Some(1000));
    assert_eq!(section(&p, "single"), Some(500));
    assert_eq!(section(&p, "malloc"), Some(30));
    assert_eq!(section(&p, "free"), None);
}

/// The end-to-end check: `CALLGRIND_OUT=/tmp/cg.out cargo test real_file -- --ignored --nocapture`
/// reads a file valgrind wrote and prints what it found.
#[test]
#[ignore]
fn real_file() {
    let path = std::env::var("CALLGRIND_OUT").expect("CALLGRIND_OUT: a callgrind output file");
    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    let p = read(file).unwrap();
    println!(
        "{path}: total {} Ir, {} functions, {} calls",
        p.total,
        p.functions.len(),
        p.calls.len()
    );
    for f in p
        .functions
        .iter()
        .filter(|f| f.name.starts_with("prog::") || f.name.contains("<prog::"))
    {
        println!("  {:>12} {:>12}  {}", f.inclusive, f.self_cost, f.name);
    }
    for name in [
        "single",
        "double",
        "Solver::step",
        "fact",
        "generic",
        "main",
    ] {
        println!("  section {name}: {:?}", section(&p, name));
    }
    if let (Some(single), Some(double)) = (section(&p, "single"), section(&p, "double")) {
        println!("  double / single = {:.4}", double as f64 / single as f64);
    }
}
