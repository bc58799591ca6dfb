// Package live is the machinery of live updates (GraphQL subscriptions):
// the hub that hears the events PostgreSQL announces and offers each to
// this process's subscribers (hub.go), the delivery lanes that write each
// response once for the subscribers sharing it (delivery.go), what a
// websocket connection gives its subscriptions, its caller kept and
// re-checked (connection.go), and the snapshots of spaces and access the
// checks of space subscriptions decide from (snapshots.go).
//
// It decides nothing about who may read what. graph does: its
// subscription resolvers (graph/subscription.go) give each subscription a
// check, made with graph's authorization, which the hub runs for every
// event, and map the hub's refusals to the API's errors. So what stays in
// graph is what must: the resolvers of gqlgen's Subscription type, the
// websocket sessions (which resolve tokens into graph's callers), the
// read rules (spaceAllowed, and the organization's access snapshot, whose
// type is graph's and which the hub keeps as a type parameter, A), and
// recording events in the changes' transactions (recordLive). The caller
// type, C, is graph's *Caller, which the hub knows only through Caller.
// This package does not import graph.
package live
