// Package wholeserver holds the tests that start the whole server — the
// GraphQL API, the /v1 REST adapter and the published sites' reader, as
// cmd/docsapi/server assembles them — over real HTTP on an embedded
// PostgreSQL (servertest), and walk it as its users do: a person through
// the API, GitBook's own client and CLI, a front end's GraphQL, an attacker.
// It has no code of its own; each test gets its own database.
//
// The files are named by domain (space_test.go, site_test.go,
// change_request_test.go...) and by the walks over the whole route table:
// every route for every caller (permission_test.go, tenancy_test.go,
// authz_walk_test.go), hostile and malformed input (hostile_test.go,
// bytes_test.go), GitBook's reference, client and CLI
// (reference_shapes_test.go, reference_alternatives_test.go,
// gitbook_client_test.go, gitbook_cli_test.go), replicas and Citus
// (replica_test.go, citus_faults_test.go). bench_test.go measures the two
// hottest reads in-process.
//
// A test of what a user sees goes here, in the file of its domain; a test
// of one package's code without a server goes beside that code (the REST
// adapter's route table, reference and JSON body in rest, the reader's
// rendering in published/render).
package wholeserver
