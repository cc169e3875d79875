package mldf

// Test helpers for the external tests (hostile_test.go), which import internal/hostile, a
// package that imports this one.
var (
	LyingBase = lyingBase
	Golden    = golden
	ReadAll   = readAll
	IsImage   = isImage
	IsAudio   = isAudio
	IsText    = isText
)
