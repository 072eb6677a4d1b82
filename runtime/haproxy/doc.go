// Package haproxy is the one owner of the HAProxy side of haroute. An Instance keeps one running
// HAProxy (master-worker mode, files under one directory) in step with a sequence of desired states:
//
//   - start-up: InitialFiles (plan and render of the first state, spare pool included), WriteInitial
//     (the files HAProxy starts from, recorded as applied) and Adopt (an HAProxy that already ran
//     before the files were written is reloaded by the first Update);
//   - Update and Refill: plan against what HAProxy runs, render and write the files first
//     (write-through, so a reload or a restart reproduces the state), then apply the runtime ops, or
//     reload (a validated, hitless reload) when the plan is structural or an op fails;
//   - Repair: compare what HAProxy serves with the applied state and repair the difference through
//     runtime ops, or leave a reload (Drift) to the next Update;
//   - Restarted and Processes: an HAProxy restart the Instance did not cause loses every runtime
//     change, so the next Update reloads (Restart);
//   - Ping and Applied for health checks and inspection.
//
// Every reload carries exactly one typed reason (plan.ReasonKind): the plan's own (Initial,
// GlobalChanged, NewBackend, ...), or the Instance's (Restart, Drift, ReloadMode, RuntimeFallback,
// TemplateChanged). TemplateChanged comes from the masked-render check: a runtime plan whose
// haproxy.cfg differs from the applied one outside the server lines (render.MaskRuntime) is a reload,
// so that a custom template can never make a runtime change serve something a reload would not.
//
// An Instance serialises its methods: Update, Refill, Repair and Restarted exclude each other, so
// drift repair never runs while a reload or an update is in flight.
package haproxy
