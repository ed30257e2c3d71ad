//! The judgement: given each top-level module's layer, every use that
//! points to a later layer, every cycle between top-level modules or
//! between the children of one (test code aside: a test may use what it
//! tests and its neighbours), and every module no layer names.

use std::collections::{BTreeMap, BTreeSet};

use crate::paths::Use;

/// A crate's layers, lowest first: each module may use only modules of its
/// own layer or earlier ones (and no cycle within a layer).
pub struct Layers<'a> {
    pub layers: &'a [&'a [&'a str]],
    /// Modules whose children may still use each other in a cycle, each
    /// with what it would take to undo (a debt, listed to shrink; every
    /// other module's children form layers of their own).
    pub cycles_inside: &'a [(&'a str, &'a str)],
}

/// What is wrong, one line each.
pub fn problems(layers: &Layers, modules: &BTreeSet<String>, uses: &[Use]) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = layers
        .layers
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut out = Vec::new();
    for module in modules {
        if !layer_of.contains_key(module.as_str()) {
            out.push(format!("unlayered module: {module} (give it a layer)"));
        }
    }
    for name in layer_of.keys() {
        if !modules.contains(*name) {
            out.push(format!(
                "no module {name}: a layer names a module the crate does not declare"
            ));
        }
    }
    for u in uses {
        if let (Some(&from), Some(&to)) =
            (layer_of.get(u.from.as_str()), layer_of.get(u.to.as_str()))
            && to > from
        {
            out.push(format!(
                "upward dependency: {} (layer {from}) uses {} (layer {to}) at {}:{}",
                u.from,
                u.to,
                u.file.display(),
                u.line
            ));
        }
    }
    let between: Vec<&Use> = uses.iter().filter(|u| u.from != u.to).collect();
    let top = |u: &Use| Some((u.from.clone(), u.to.clone()));
    for component in cycles(&graph_of(&between, top)) {
        out.push(format!("cycle: {}", witnessed(&component, &between, top)));
    }
    let excused = |m: &str| layers.cycles_inside.iter().any(|(name, _)| *name == m);
    for module in modules.iter().filter(|m| !excused(m)) {
        let inside: Vec<&Use> = uses
            .iter()
            .filter(|u| &u.from == module && &u.to == module && !u.test)
            .collect();
        let child = |u: &Use| match (&u.from_child, &u.to_child) {
            (Some(a), Some(b)) if a != b => Some((a.clone(), b.clone())),
            _ => None,
        };
        for component in cycles(&graph_of(&inside, child)) {
            out.push(format!(
                "cycle inside {module}: {}",
                witnessed(&component, &inside, child)
            ));
        }
    }
    out
}

/// `component`'s modules joined, and the uses that close it with their
/// files and lines.
fn witnessed(
    component: &[String],
    uses: &[&Use],
    edge: impl Fn(&Use) -> Option<(String, String)>,
) -> String {
    let witnesses: Vec<String> = uses
        .iter()
        .filter_map(|u| {
            let (a, b) = edge(u)?;
            (component.contains(&a) && component.contains(&b))
                .then(|| format!("{a} -> {b} at {}:{}", u.file.display(), u.line))
        })
        .collect();
    format!("{} ({})", component.join(" <-> "), witnesses.join("; "))
}

/// The graph of the edges `edge` reads from `uses`.
fn graph_of(
    uses: &[&Use],
    edge: impl Fn(&Use) -> Option<(String, String)>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in uses.iter().filter_map(|u| edge(u)) {
        graph.entry(a).or_default().insert(b.clone());
        graph.entry(b).or_default();
    }
    graph
}

/// Each top-level module's set of the others it uses.
pub fn graph(uses: &[Use]) -> BTreeMap<String, BTreeSet<String>> {
    let between: Vec<&Use> = uses.iter().filter(|u| u.from != u.to).collect();
    graph_of(&between, |u| Some((u.from.clone(), u.to.clone())))
}

/// The strongly connected components of more than one module (Tarjan's
/// algorithm), each sorted.
pub fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// A crate whose root is one module (`sojourn-plan`'s root is the planner):
/// its top-level modules become the children of one module `name`, so that
/// a cycle between them is a cycle inside `name`.
pub fn as_one_module(
    name: &str,
    (modules, uses): (BTreeSet<String>, Vec<Use>),
) -> (BTreeSet<String>, Vec<Use>) {
    let children = |m: String| modules.contains(&m).then_some(m);
    let uses = uses
        .into_iter()
        .map(|u| Use {
            from: name.to_string(),
            to: name.to_string(),
            from_child: children(u.from),
            to_child: children(u.to),
            ..u
        })
        .collect();
    (BTreeSet::from([name.to_string()]), uses)
}
