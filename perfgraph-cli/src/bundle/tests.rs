//! The manifest reader against mutations of a manifest `record` writes: every member removed, every value
//! replaced by values of other kinds, every prefix of the text, paths that leave the bundle. Each is one
//! line of error or a manifest that still says what it said; none panics.

use super::*;

fn sample() -> Manifest {
    let run = |side, index, order| Run {
        side,
        index,
        order,
        files: vec![RunFile {
            path: PathBuf::from(format!("runs/{}-{index:03}.0.json", Side::name(side))),
            rank: 0,
        }],
        callgrind: Some(PathBuf::from("runs/x.callgrind")),
        exit: 0,
        start_unix_ns: 1_700_000_000_000_000_000,
        wall_ns: 123_456_789,
        load_average: [0.5, 1.25, 2.0],
        git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        git_dirty: false,
        rustc: Some("rustc version 1.88.0".into()),
        cpu_model: Some("AMD EPYC".into()),
    };
    Manifest {
        metric: Recorded::Cpu,
        seed: 42,
        command: vec!["./prog".into(), "--fast".into()],
        baseline: Some(vec!["./old".into()]),
        runs: vec![
            run(Side::Head, 1, 1),
            run(Side::Base, 1, 2),
            run(Side::Base, 2, 3),
            run(Side::Head, 2, 4),
        ],
    }
}

#[test]
fn a_manifest_reads_back_as_written() {
    let m = sample();
    assert_eq!(parse(&m.to_json()).unwrap(), m);
    let heads: Vec<u32> = m.side(Side::Head).iter().map(|r| r.index).collect();
    assert_eq!(heads, [1, 2]);
}

/// Every JSON value of `v`, addressed by a path of keys and indices, each with a setter.
fn paths(v: &Value, at: Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(at.clone());
    match v {
        Value::Object(o) => {
            for (k, c) in o {
                let mut p = at.clone();
                p.push(Value::String(k.clone()));
                paths(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let mut p = at.clone();
                p.push(Value::from(i));
                paths(c, p, out);
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match k {
        Value::String(k) => &mut v[k.as_str()],
        k => &mut v[k.as_u64().unwrap() as usize],
    })
}

fn one_line(r: Result<Manifest, String>) -> Option<Manifest> {
    match r {
        Ok(m) => Some(m),
        Err(e) => {
            assert!(!e.is_empty() && !e.contains('\n'), "not one line: {e:?}");
            None
        }
    }
}

#[test]
fn every_member_removed_or_of_another_kind_is_refused_or_harmless() {
    let original: Value = serde_json::from_str(&sample().to_json()).unwrap();
    let mut all = Vec::new();
    paths(&original, Vec::new(), &mut all);
    let optional = ["baseline", "callgrind", "git_commit", "rustc", "cpu_model"];
    let others = [
        Value::Null,
        json!(-1),
        json!(1.5),
        json!(1e300),
        json!(u64::MAX),
        json!("x"),
        json!("../../etc/passwd"),
        json!("/etc/passwd"),
        json!(true),
        json!([]),
        json!({}),
        json!("a".repeat(5000)),
    ];
    let mut refused = 0;
    for path in all.iter().filter(|p| !p.is_empty()) {
        // Removed.
        let (parent, last) = path.split_at(path.len() - 1);
        let mut v = original.clone();
        match (&mut *at(&mut v, parent), &last[0]) {
            (Value::Object(o), Value::String(k)) => {
                o.remove(k);
            }
            (Value::Array(a), i) => {
                a.remove(i.as_u64().unwrap() as usize);
            }
            _ => unreachable!(),
        }
        let name = last[0].as_str().unwrap_or("");
        match one_line(parse(&v.to_string())) {
            None => refused += 1,
            Some(m) => assert!(
                optional.contains(&name) || last[0].is_u64(),
                "{path:?} removed and read: {m:?}"
            ),
        }
        // Replaced.
        for other in &others {
            let mut v = original.clone();
            *at(&mut v, path) = other.clone();
            if one_line(parse(&v.to_string())).is_none() {
                refused += 1;
            }
        }
    }
    assert!(refused > all.len(), "{refused} refusals");
}

#[test]
fn every_prefix_of_the_text_is_refused() {
    let text = sample().to_json();
    let end = text.trim_end().len();
    for cut in 0..end {
        if text.is_char_boundary(cut) {
            assert!(one_line(parse(&text[..cut])).is_none(), "prefix {cut} read");
        }
    }
}

#[test]
fn paths_out_of_the_bundle_and_repeats_are_refused() {
    for bad in ["../x.json", "/etc/passwd", "runs/../../x", ""] {
        let mut m = sample();
        m.runs[0].files[0].path = PathBuf::from(bad);
        let e = parse(&m.to_json()).unwrap_err();
        assert!(e.contains("not a path inside the bundle"), "{e}");
    }
    let mut m = sample();
    m.runs[1].side = Side::Head;
    let e = parse(&m.to_json()).unwrap_err();
    assert!(e.contains("listed twice"), "{e}");
    let e = parse(
        &sample()
            .to_json()
            .replace("\"perfgraph_bundle\": 1", "\"perfgraph_bundle\": 7"),
    )
    .unwrap_err();
    assert!(e.contains("format 7"), "{e}");
}
