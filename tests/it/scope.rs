//! Name resolution in the loader: the first definition of a name keeps it, whether the graph is
//! small (names entered one by one) or large (node outputs entered in one batch, grouped by
//! where they land in the table, and uses found among the recent outputs first).

use crate::build;

use onnx_bcast::ir::{Def, ValueId};
use onnx_bcast::Model;

/// A chain of `n` Adds `t{i} = t{i-1} + x`, with these twists (`h` is `n / 2`):
/// node 5 uses `t7` before node 7 defines it; node `h` defines `x` again (the graph input
/// keeps it); node `h + 1` defines `t10` again and node `h + 2` uses `t10` right after; the
/// last node uses `t10` and `x`.
fn chain(n: usize) -> Model {
    let h = n / 2;
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let prev = if i == 0 { "x".to_string() } else { format!("t{}", i - 1) };
        let out = format!("t{i}");
        let (inputs, output): ([&str; 2], &str) = match i {
            5 => ([&prev, "t7"], &out),
            _ if i == h => ([&prev, "x"], "x"),
            _ if i == h + 1 => ([&format!("t{}", i - 2), "x"], "t10"),
            _ if i == h + 2 || i == n - 1 => (["t10", "x"], &out),
            _ => ([&prev, "x"], &out),
        };
        nodes.push(build::node(&out, "Add", &inputs, &[output]));
    }
    build::load(&build::model(17, vec![build::input("x", &[4])], nodes, &[&format!("t{}", n - 1)]))
}

/// The output of the `i`-th node in file order.
fn output(m: &Model, i: usize) -> ValueId {
    m.node(m.graph(Model::MAIN).order()[i]).outputs()[0].expect("has an output")
}

fn input(m: &Model, i: usize, slot: usize) -> ValueId {
    m.node(m.graph(Model::MAIN).order()[i]).inputs()[slot].expect("has the input")
}

fn check(n: usize) {
    let m = chain(n);
    let h = n / 2;
    let x = m.local(Model::MAIN, "x").expect("x is defined");
    assert_eq!(m.value(x).def(), Def::Input, "{n} nodes: the graph input keeps x");
    let t10 = output(&m, 10);
    assert_eq!(m.local(Model::MAIN, "t10"), Some(t10), "{n} nodes: node 10 keeps t10");

    // Later definitions shadow the first, and nothing else does.
    assert_eq!(m.value(output(&m, h)).shadows(), Some(x), "{n} nodes");
    assert_eq!(m.value(output(&m, h + 1)).shadows(), Some(t10), "{n} nodes");
    let shadowing = m.value_ids().filter(|v| m.value(*v).shadows().is_some()).count();
    assert_eq!(shadowing, 2, "{n} nodes: only the two redefinitions shadow");

    // Uses resolve to the first definition, wherever they are.
    assert_eq!(input(&m, 5, 1), output(&m, 7), "{n} nodes: a use before its definition");
    assert_eq!(input(&m, h + 2, 0), t10, "{n} nodes: a use right after a redefinition");
    assert_eq!(input(&m, n - 1, 0), t10, "{n} nodes: a use far after it");
    assert_eq!(input(&m, h + 1, 1), x, "{n} nodes");
    assert_eq!(input(&m, n - 1, 1), x, "{n} nodes: x after node {h} redefined it");
    assert_eq!(input(&m, h + 3, 0), output(&m, h + 2), "{n} nodes: a plain chain link");
    for i in (1..n).filter(|i| ![5, h, h + 1, h + 2, h + 3, n - 1].contains(i)) {
        assert_eq!(input(&m, i, 0), output(&m, i - 1), "{n} nodes: node {i}'s first input");
        assert_eq!(input(&m, i, 1), x, "{n} nodes: node {i}'s second input");
    }
    // The edges agree with the inputs: each output's users are the nodes that take it.
    let order = m.graph(Model::MAIN).order();
    let mut takers: std::collections::HashMap<ValueId, Vec<_>> = std::collections::HashMap::new();
    for u in order {
        for v in m.node(*u).inputs().iter().flatten() {
            takers.entry(*v).or_default().push(*u);
        }
    }
    for i in 0..order.len() {
        let v = output(&m, i);
        let mut expected = takers.remove(&v).unwrap_or_default();
        expected.sort();
        expected.dedup();
        assert_eq!(m.users(v), expected, "{n} nodes: the users of node {i}'s output");
    }
    // Every name is found again by lookup.
    for i in (0..n).filter(|i| ![h, h + 1].contains(i)) {
        let name = format!("t{i}");
        assert_eq!(m.local(Model::MAIN, &name), Some(output(&m, i)), "{n} nodes: {name}");
    }
}

#[test]
fn small_graphs_keep_the_first_definition() {
    check(100);
}

/// Above the loader's batch threshold (2^15 names), with a table large enough to group.
#[test]
fn large_graphs_keep_the_first_definition() {
    check(70_000);
}

#[test]
fn topological_order_follows_the_file_where_it_can() {
    // The names of the nodes in topological order, and of those on or behind a cycle.
    let order = |nodes: Vec<onnx_bcast::io::proto::NodeProto>, outputs: &[&str]| -> (Vec<String>, Vec<String>) {
        let m = build::load(&build::model(17, vec![build::input("x", &[4])], nodes, outputs));
        let (order, cyclic) = m.topo_order(Model::MAIN);
        let names = |ids: &[onnx_bcast::ir::NodeId]| ids.iter().map(|n| m.node(*n).name.to_string()).collect();
        (names(&order), names(&cyclic))
    };
    // In file order already: the file's order.
    let nodes = vec![
        build::node("n0", "Add", &["x", "x"], &["a"]),
        build::node("n1", "Add", &["a", "x"], &["b"]),
        build::node("n2", "Add", &["b", "a"], &["c"]),
    ];
    assert_eq!(order(nodes, &["c"]), (vec!["n0".into(), "n1".into(), "n2".into()], vec![]));
    // n1 uses what n2 defines: n2 moves up, the rest keep their places.
    let nodes = vec![
        build::node("n0", "Add", &["x", "x"], &["a"]),
        build::node("n1", "Add", &["b", "x"], &["c"]),
        build::node("n2", "Add", &["a", "x"], &["b"]),
        build::node("n3", "Add", &["c", "a"], &["d"]),
        build::node("n4", "Add", &["x", "x"], &["e"]),
    ];
    let want: Vec<String> = ["n0", "n2", "n1", "n3", "n4"].map(String::from).into();
    assert_eq!(order(nodes, &["d", "e"]), (want, vec![]));
    // A node that uses its own output is on a cycle; what follows it waits behind it.
    let nodes = vec![
        build::node("n0", "Add", &["x", "x"], &["a"]),
        build::node("n1", "Add", &["a", "b"], &["b"]),
        build::node("n2", "Add", &["b", "x"], &["c"]),
    ];
    assert_eq!(order(nodes, &["c"]), (vec!["n0".into()], vec!["n1".into(), "n2".into()]));
}
