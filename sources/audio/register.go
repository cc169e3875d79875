package audio

import (
	"context"

	"github.com/mldf/convert/sources"
)

// The capabilities of the sources.
var (
	_ sources.Sharder      = (*Folder)(nil)
	_ sources.Classer      = (*Folder)(nil)
	_ sources.ColumnLister = (*Folder)(nil)
	_ sources.Sharder      = (*LibriSpeech)(nil)
	_ sources.ColumnLister = (*LibriSpeech)(nil)
	_ sources.Sharder      = (*Manifest)(nil)
)

func init() {
	sources.Register(sources.Spec{
		Name: "audio_folder", Inputs: sources.ByPath, Buckets: true, KeyColumn: ColPath,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return OpenFolderContext(ctx, cfg.Path, Options{Store: cfg.Store})
		},
	})
	sources.Register(sources.Spec{
		Name: "librispeech", Inputs: sources.ByPath, Buckets: true,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return OpenLibriSpeechContext(ctx, cfg.Path, Options{Store: cfg.Store})
		},
	})
	sources.Register(sources.Spec{
		Name: "nemo_manifest", Inputs: sources.ByPath, Buckets: true,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return OpenManifestContext(ctx, cfg.Path, Options{Store: cfg.Store})
		},
	})
}
