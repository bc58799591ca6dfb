package store

import (
	"context"
	"io/fs"
	"testing/fstest"

	"github.com/uptrace/bun/migrate"
)

// MigrateBefore applies our migrations whose file names sort before name,
// and nothing else: a test of migration name starts from the database the
// migration meets in the field.
func (db *DB) MigrateBefore(ctx context.Context, name string) error {
	older := fstest.MapFS{}
	err := fs.WalkDir(migrationFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() >= name {
			return err
		}
		data, err := fs.ReadFile(migrationFiles, path)
		older[path] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		return err
	}
	migrations := migrate.NewMigrations()
	if err := migrations.Discover(older); err != nil {
		return err
	}
	migrator := migrate.NewMigrator(db.DB, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx)
	return err
}
