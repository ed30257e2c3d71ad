//! Every path one module names in another: a crate's module tree walked
//! from its root as rustc finds the files (`mod x;`, `#[path]`, inline
//! modules), each file parsed by syn, and every `use` tree (nested groups,
//! renames, globs), inline path, macro argument and attribute string
//! (`#[serde(with = "crate::…")]`) resolved to the top-level module it
//! names: `crate::`, `self::` and any number of `super::` from the file's
//! real module path, and names the crate root imports (`use
//! crate::PlanResult` names `plan` when `lib.rs` says `pub use
//! plan::PlanResult`). Doc comments and visibility paths (`pub(in
//! crate::x)`) name nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit_mut::{self, VisitMut};

/// One module naming another (or a module naming one of its own
/// top-level module's).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Use {
    /// The top-level module whose file names `to`.
    pub from: String,
    /// The top-level module named.
    pub to: String,
    /// The child of `from` the naming module is or is in (`scenario` for
    /// `model::scenario::tests`); `None` in `from`'s own file.
    pub from_child: Option<String>,
    /// The child of `to` named (`plan_checks` for
    /// `crate::model::plan_checks::check_plan`), when a module.
    pub to_child: Option<String>,
    /// Whether the naming module is test code (under `#[cfg(test)]`).
    pub test: bool,
    /// The file, relative to the crate's source directory.
    pub file: PathBuf,
    /// Its line.
    pub line: usize,
}

/// A crate's sources: reads a file relative to its source directory.
pub trait Sources {
    /// The text of `path`, or `None` when there is no such file.
    fn read(&self, path: &Path) -> Option<String>;
}

impl Sources for BTreeMap<PathBuf, String> {
    fn read(&self, path: &Path) -> Option<String> {
        self.get(path).cloned()
    }
}

/// The files of a directory on disk.
pub struct Directory(pub PathBuf);

impl Sources for Directory {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(self.0.join(path)).ok()
    }
}

/// Every use of one top-level module by another in the crate whose root
/// file is `root` (`lib.rs`), and the top-level modules it declares.
pub fn uses(sources: &dyn Sources, root: &Path) -> Result<(BTreeSet<String>, Vec<Use>), String> {
    let text = sources
        .read(root)
        .ok_or_else(|| format!("{}: no such file", root.display()))?;
    let file = parse(root, &text)?;
    let modules: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    let imports = root_imports(&file, &modules);
    let mut walker = Walker {
        sources,
        modules: &modules,
        imports: &imports,
        uses: Vec::new(),
        children: BTreeSet::new(),
    };
    for item in &file.items {
        if let syn::Item::Mod(m) = item {
            walker.module(m, root, &[], false)?;
        }
    }
    let mut found = walker.uses;
    // A named child is one only if the walk found such a module.
    for u in &mut found {
        if u.to_child
            .as_ref()
            .is_some_and(|c| !walker.children.contains(&(u.to.clone(), c.clone())))
        {
            u.to_child = None;
        }
    }
    found.sort();
    found.dedup();
    Ok((modules, found))
}

fn parse(path: &Path, text: &str) -> Result<syn::File, String> {
    syn::parse_file(text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}: {e}", path.display(), at.line)
    })
}

/// The top-level modules each name imported at the crate root comes from
/// (`pub use plan::{PlanResult, …}`, `use crate::x::Y as Z`), and under the
/// empty name those its globs open.
fn root_imports(
    file: &syn::File,
    modules: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Use(u) = item else { continue };
        for path in expand(&u.tree) {
            let segments: Vec<&str> = path.segments.iter().map(String::as_str).collect();
            let segments = match segments.as_slice() {
                ["crate", rest @ ..] | ["self", rest @ ..] => rest,
                all => all,
            };
            let Some(first) = segments.first().filter(|s| modules.contains(**s)) else {
                continue;
            };
            let name = if path.glob {
                String::new()
            } else {
                path.name.clone()
            };
            out.entry(name).or_default().insert((*first).to_string());
        }
    }
    out
}

/// One path of a `use` tree, with the name it brings in.
struct UsePath {
    segments: Vec<String>,
    /// The name in scope (a rename's new name); empty for a glob.
    name: String,
    glob: bool,
    span: Span,
}

/// The paths of a `use` tree, its groups expanded (`a::{b, c::{d, self}}`
/// is `a::b`, `a::c::d`, `a::c`).
fn expand(tree: &syn::UseTree) -> Vec<UsePath> {
    fn go(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UsePath>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                go(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => out.push(leaf(prefix, &n.ident, None)),
            syn::UseTree::Rename(r) => out.push(leaf(prefix, &r.ident, Some(&r.rename))),
            syn::UseTree::Glob(g) => out.push(UsePath {
                segments: prefix.clone(),
                name: String::new(),
                glob: true,
                span: g.star_token.span,
            }),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    go(tree, prefix, out);
                }
            }
        }
    }
    fn leaf(prefix: &[String], ident: &syn::Ident, rename: Option<&syn::Ident>) -> UsePath {
        let mut segments = prefix.to_vec();
        // `a::{self}` is `a`.
        if ident != "self" || segments.is_empty() {
            segments.push(ident.to_string());
        }
        let name = rename.unwrap_or(ident).to_string();
        UsePath {
            segments,
            name,
            glob: false,
            span: ident.span(),
        }
    }
    let mut out = Vec::new();
    go(tree, &mut Vec::new(), &mut out);
    out
}

struct Walker<'a> {
    sources: &'a dyn Sources,
    modules: &'a BTreeSet<String>,
    imports: &'a BTreeMap<String, BTreeSet<String>>,
    uses: Vec<Use>,
    /// Every (top-level module, child module) found.
    children: BTreeSet<(String, String)>,
}

impl Walker<'_> {
    /// The module `m`, declared in `file` inside module `parent`: its items
    /// when inline, else its file's.
    /// `test`: whether `parent` is test code.
    fn module(
        &mut self,
        m: &syn::ItemMod,
        file: &Path,
        parent: &[String],
        test: bool,
    ) -> Result<(), String> {
        let mut path = parent.to_vec();
        path.push(m.ident.to_string());
        if let [top, child] = path.as_slice() {
            self.children.insert((top.clone(), child.clone()));
        }
        let test = test || is_cfg_test(&m.attrs);
        match &m.content {
            // An inline module's `mod x;` are found in a folder named after
            // it, beside its file's.
            Some((_, items)) => self.items(items.clone(), file, &path, test),
            None => {
                let child = self.child_file(m, file, parent)?;
                let text = self
                    .sources
                    .read(&child)
                    .ok_or_else(|| format!("{}: no such file", child.display()))?;
                let parsed = parse(&child, &text)?;
                self.items(parsed.items, &child, &path, test)
            }
        }
    }

    /// The items of module `path`, written in `file`.
    fn items(
        &mut self,
        mut items: Vec<syn::Item>,
        file: &Path,
        path: &[String],
        test: bool,
    ) -> Result<(), String> {
        let mut visitor = Visitor::new(self, file, path);
        visitor.test = test;
        for item in &mut items {
            visitor.visit_item_mut(item);
        }
        let found = visitor.found;
        self.uses.extend(found);
        for item in &items {
            if let syn::Item::Mod(inner) = item {
                self.module(inner, file, path, test)?;
            }
        }
        Ok(())
    }

    /// Where rustc looks for the file of `mod m;`, declared in `file`
    /// inside module `parent` (the file's own module, or an inline one in
    /// it).
    fn child_file(
        &self,
        m: &syn::ItemMod,
        file: &Path,
        parent: &[String],
    ) -> Result<PathBuf, String> {
        let dir = file.parent().unwrap_or(Path::new(""));
        if let Some(path) = path_attribute(&m.attrs) {
            return Ok(dir.join(path));
        }
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        // A file that owns its folder (lib.rs, main.rs, mod.rs) finds its
        // children there; `foo.rs` in `foo/`.
        let owns_folder = matches!(stem, "lib" | "main" | "mod");
        let mut base = if owns_folder {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        // Inline modules between the file's module and `m` add folders.
        let depth_of_file = self.file_depth(file, parent);
        for inline in &parent[depth_of_file..] {
            base = base.join(inline);
        }
        let name = m.ident.to_string();
        let flat = base.join(format!("{name}.rs"));
        if self.sources.read(&flat).is_some() {
            return Ok(flat);
        }
        let nested = base.join(&name).join("mod.rs");
        if self.sources.read(&nested).is_some() {
            return Ok(nested);
        }
        Err(format!(
            "{}: `mod {name};` has no file ({} or {})",
            file.display(),
            flat.display(),
            nested.display()
        ))
    }

    /// How many of `parent`'s segments `file` itself stands for (the rest
    /// are inline modules in it): its folders, plus its stem unless it is
    /// a folder's own file.
    fn file_depth(&self, file: &Path, parent: &[String]) -> usize {
        let folders = file.parent().map_or(0, |d| d.components().count());
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let own = usize::from(!matches!(stem, "lib" | "main" | "mod"));
        (folders + own).min(parent.len())
    }
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The value of a `#[path = "…"]` attribute.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Finds the paths in one file's items (not descending into modules,
/// which [`Walker`] visits with their own paths).
struct Visitor<'w, 'a> {
    walker: &'w Walker<'a>,
    file: PathBuf,
    /// The module path of the items being visited.
    path: Vec<String>,
    /// Whether it is test code.
    test: bool,
    found: Vec<Use>,
}

impl<'w, 'a> Visitor<'w, 'a> {
    fn new(walker: &'w Walker<'a>, file: &Path, path: &[String]) -> Self {
        Visitor {
            walker,
            file: file.to_path_buf(),
            path: path.to_vec(),
            test: false,
            found: Vec::new(),
        }
    }

    /// Records the top-level modules `segments`, written in this module,
    /// names: none unless it starts with `crate`, `self` or `super`.
    fn record(&mut self, segments: &[String], glob: bool, span: Span) {
        let Some(absolute) = absolute(&self.path, segments) else {
            return;
        };
        let Some(from) = self.path.first() else {
            return;
        };
        // (top-level module, the child named if any)
        let targets: BTreeSet<(String, Option<String>)> = match absolute.first() {
            // The crate root itself: a glob opens whatever it imports.
            None if glob => self
                .walker
                .imports
                .values()
                .flatten()
                .map(|m| (m.clone(), None))
                .collect(),
            None => BTreeSet::new(),
            Some(first) if self.walker.modules.contains(first) => {
                BTreeSet::from([(first.clone(), absolute.get(1).cloned())])
            }
            Some(first) => self
                .walker
                .imports
                .get(first)
                .into_iter()
                .flatten()
                .map(|m| (m.clone(), None))
                .collect(),
        };
        for (to, to_child) in targets {
            self.found.push(Use {
                from: from.clone(),
                to,
                from_child: self.path.get(1).cloned(),
                to_child,
                test: self.test,
                file: self.file.clone(),
                line: span.start().line,
            });
        }
    }

    /// The paths in a macro's or attribute's tokens: `crate :: a`,
    /// `super :: super :: b`, and string literals that hold one.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Literal(lit) => {
                    let text = lit.to_string();
                    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                        let segments: Vec<String> = inner.split("::").map(str::to_string).collect();
                        if segments.len() > 1 && segments.iter().all(|s| is_ident(s)) {
                            self.record(&segments, false, lit.span());
                        }
                    }
                }
                TokenTree::Ident(ident)
                    if matches!(ident.to_string().as_str(), "crate" | "self" | "super") =>
                {
                    let (segments, next) = path_in_tokens(&trees, i);
                    if segments.len() > 1 {
                        self.record(&segments, false, ident.span());
                        i = next;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The path `a :: b :: c` starting at token `start`, and the index after it.
fn path_in_tokens(trees: &[TokenTree], start: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    let mut i = start;
    while let Some(TokenTree::Ident(ident)) = trees.get(i) {
        segments.push(ident.to_string());
        let colons = matches!(
            (trees.get(i + 1), trees.get(i + 2)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
        );
        if !colons {
            return (segments, i + 1);
        }
        i += 3;
    }
    (segments, i)
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `segments`, written in module `here`, from the crate root; `None` when
/// it does not start at the crate (an external crate, a local name).
fn absolute(here: &[String], segments: &[String]) -> Option<Vec<String>> {
    match segments.first().map(String::as_str) {
        Some("crate") => Some(segments[1..].to_vec()),
        Some("self") => Some(here.iter().chain(&segments[1..]).cloned().collect()),
        Some("super") => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            let base = here.len().checked_sub(ups)?;
            Some(
                here[..base]
                    .iter()
                    .chain(&segments[ups..])
                    .cloned()
                    .collect(),
            )
        }
        _ => None,
    }
}

impl VisitMut for Visitor<'_, '_> {
    fn visit_item_use_mut(&mut self, u: &mut syn::ItemUse) {
        for path in expand(&u.tree) {
            self.record(&path.segments, path.glob, path.span);
        }
    }

    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.record(&segments, false, first.ident.span());
        }
        visit_mut::visit_path_mut(self, p);
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        self.visit_path_mut(&mut m.path);
        self.tokens(m.tokens.clone());
    }

    fn visit_attribute_mut(&mut self, a: &mut syn::Attribute) {
        // Doc comments link, they do not depend.
        if a.path().is_ident("doc") {
            return;
        }
        match &a.meta {
            syn::Meta::List(list) => self.tokens(list.tokens.clone()),
            syn::Meta::NameValue(nv) => {
                let tokens = quote_expr(&nv.value);
                self.tokens(tokens);
            }
            syn::Meta::Path(_) => {}
        }
    }

    // `pub(in crate::x)` limits who sees an item; it names no dependency.
    fn visit_visibility_mut(&mut self, _: &mut syn::Visibility) {}

    // Modules are visited by the walker, with their own paths.
    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        for attr in &mut m.attrs {
            if !attr.path().is_ident("path") {
                self.visit_attribute_mut(attr);
            }
        }
    }
}

/// An attribute value's tokens.
fn quote_expr(e: &syn::Expr) -> TokenStream {
    e.to_token_stream()
}
