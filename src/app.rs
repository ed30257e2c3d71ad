//! The page: a header, the toolbar, the guide (closed), the inputs on the left and the results
//! on the right (on narrow screens the results first, then the inputs).

use leptos::prelude::*;

use crate::panels::fields::TextField;
use crate::panels::guide::Guide;
use crate::panels::model::{HardwarePanel, ModelPanel};
use crate::panels::plan::{CasesPanel, PricesPanel, TargetsPanel};
use crate::panels::results::ResultsPanel;
use crate::panels::serving::{ServingPanel, SimulationPanel};
use crate::panels::toolbar::{NoticeBar, Toolbar};
use crate::panels::workload::WorkloadPanel;
use crate::registry::inputs;
use crate::state::AppState;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    crate::help::close_tips_on_escape();
    // For what any panel needs beside its own props (a download's provenance).
    provide_context(state);
    view! {
        <a class="skip-link" href="#results">
            "Skip to results"
        </a>
        <header class="page-header">
            <h1>"Sojourn"</h1>
            <p class="tagline">
                "Capacity and SLA planning for batched LLM inference. Describe the traffic, model, "
                "hardware and fleet; see how many requests miss their deadline, what each successful "
                "request costs, and the cheapest fleet that meets the target. Everything runs in your browser."
            </p>
        </header>
        <Toolbar state />
        <NoticeBar state />
        <aside aria-label="Guide">
            <Guide />
        </aside>
        <main class="layout">
            <div class="inputs" id="inputs" role="region" aria-label="Scenario inputs">
                <section class="panel scenario-name">
                    <TextField
                        state
                        input=&inputs::NAME
                        get=|p| p.name.clone()
                        set=|p, v| p.name = v
                    />
                </section>
                <WorkloadPanel state />
                <ModelPanel state />
                <HardwarePanel state />
                <ServingPanel state />
                <PricesPanel state />
                <TargetsPanel state />
                <CasesPanel state />
                <SimulationPanel state />
            </div>
            <div class="outputs">
                <ResultsPanel state />
            </div>
        </main>
        <footer class="page-footer">
            <p>
                "Sojourn simulates continuous batching request by request in a Web Worker; the link in the address bar holds the whole scenario, seed included."
            </p>
        </footer>
    }
}
