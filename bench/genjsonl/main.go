// Command genjsonl writes a deterministic JSONL corpus of English-like documents for
// benchmarks. Each line is {"id": int, "text": string, "meta": {"lang": string, "score": float}};
// the text is paragraphs of sentences whose words follow a Zipf-like frequency law over a
// vocabulary of common English words and words derived from English roots, prefixes and
// suffixes, with made-up names, numbers, punctuation, non-ASCII words and emoji, and a few
// documents in (transliterated) Russian, German and French.
//
// Usage:
//
//	go run ./bench/genjsonl -out /tmp/corpus.jsonl -mb 200 -seed 1
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	var (
		out  string
		mb   float64
		seed uint64
		mw   float64
	)
	flag.StringVar(&out, "out", "", "output JSONL file (overwritten)")
	flag.Float64Var(&mb, "mb", 200, "approximate size in MB (10^6 bytes); the last line ends past it")
	flag.Uint64Var(&seed, "seed", 1, "random seed")
	flag.Float64Var(&mw, "words", 0, "median words per document (log-normal); 0 means about 200 (2 KB lines), 20 gives fortune-sized lines of about 270 bytes")
	flag.Parse()
	if err := run(out, int64(mb*1e6), seed, mw); err != nil {
		fmt.Fprintln(os.Stderr, "genjsonl:", err)
		os.Exit(1)
	}
}

func run(out string, size int64, seed uint64, medianWords float64) error {
	if out == "" {
		return errors.New("-out is required")
	}
	if size <= 0 {
		return fmt.Errorf("-mb must be > 0")
	}
	start := time.Now()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := &countWriter{w: bufio.NewWriterSize(f, 1<<20)}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	g := NewGenerator(seed)
	if medianWords > 0 {
		g.mu = math.Log(medianWords)
	}
	var id int64
	for w.n < size {
		if err := enc.Encode(g.Document(id)); err != nil {
			f.Close()
			return fmt.Errorf("%s: line %d: %w", out, id+1, err)
		}
		id++
	}
	if err := w.w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "genjsonl: %d lines, %.1f MB in %s in %.1fs\n", id, float64(w.n)/1e6, out, time.Since(start).Seconds())
	return nil
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Document is one JSONL line.
type Document struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
	Meta Meta   `json:"meta"`
}

// Meta is the nested "meta" object of a Document.
type Meta struct {
	Lang  string  `json:"lang"`
	Score float64 `json:"score"`
}

// common holds frequent English words, roughly in frequency order; the Zipf ranks start here.
var common = strings.Fields(`the of and to a in is that for it as was with be by on not he I this
are or his from at which but have an they you were her she there been one all we their has would
when if so no will more can its who said what up out about into than them some other time could
only new these two may first then do any like my now over such our man me even most made after
also did many before must through back years where much your way well down should because each
just those people how too little state good very make world still own see men work long get here
between both life being under never day same another know while last might us great old year off
come since against go came right used take three states himself few house use during without
again place American around however home small found Mrs thought went say part once general high
upon school every don't does got united left number course war until always away something fact
though water less public put thing almost hand enough far took head yet government system better
set told nothing night end why called didn't eyes find going look asked later knew point next
program city business give group toward young days let room president side social given present
several order national possible rather second face per among form important often things looking
early white case John become large big need four within felt along children saw best church ever
least power development light thing seemed family interest want members mind country area others
although turned done open God service certain kind problem began different door thus help sense
whole matter perhaps itself York times law human line above name example action company hands
local show whether five history gave today either act feet across taken past quite anything
having seen death experience body word half really week free field car words order question
café naïve résumé façade Zürich coöperate jalapeño über Ångström São Paulo — “quoted” …`)

// Generator produces documents from one random stream; it is deterministic for a seed.
type Generator struct {
	r     *rand.Rand
	vocab []string // common words, then derived words, shorter ones first
	names []string // made-up proper names
	zipf  *rand.Zipf
	mu    float64 // log of the median number of words of a document (before the +5)
}

var (
	prefixes = append(strings.Fields("re un pre in dis con com de ex over under inter trans sub mis out up"), make([]string, 12)...)
	roots    = strings.Fields(`act form port struct duct spect tract mit press cept ject vert scrib graph log
phon mark work play read write build count cover light turn view load line point place state stand
sign serv solv tend vis voc cap fer pos rupt sent tain val ven mov pend plic quir fin gen just lect
man nat norm part pass quest rect sist sol tax test tort vent vers vid volv ward wood land water
stone field house ship book time hand head mind heart print track trust change charge check claim
class clear close cross cut deal draw drive fall fill find fix flow hold keep lead learn link list
lock mix move need order pay pick plan pull push rate reach rest run save search send set shape
share show sort spend start step store talk teach tell think train treat try use walk watch`)
	suffixes = append(strings.Fields("s ed ing er ers tion ment ness able ful less ly ive al ity ism ist ize ure ance"), make([]string, 10)...)
)

// NewGenerator returns a Generator whose vocabulary is the common words followed by about
// 30000 words made of an optional prefix, a root and an optional suffix, shorter ones ranked
// first.
func NewGenerator(seed uint64) *Generator {
	r := rand.New(rand.NewPCG(seed, 0x6a736f6e6c))
	seen := map[string]bool{}
	for _, w := range common {
		seen[w] = true
	}
	var tail []string
	for _, p := range prefixes {
		for _, m := range roots {
			for _, x := range suffixes {
				if w := p + m + x; !seen[w] {
					seen[w] = true
					tail = append(tail, w)
				}
			}
		}
	}
	r.Shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
	tail = tail[:min(len(tail), 30000)]
	slices.SortStableFunc(tail, func(a, b string) int { return len(a) - len(b) })
	vocab := append(append([]string(nil), common...), tail...)

	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br ch cl dr fl gr pr sh st th tr")
	nuclei := strings.Fields("a e i o u a e i o ai ea ee ou y")
	codas := append(strings.Fields("n r s t l m d ng nt st rd ck"), "", "", "", "")
	names := make([]string, 2000)
	for i := range names {
		var b strings.Builder
		for k, n := 0, 1+r.IntN(2); k < n; k++ {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(nuclei[r.IntN(len(nuclei))])
			b.WriteString(codas[r.IntN(len(codas))])
		}
		names[i] = capitalize(b.String())
	}
	return &Generator{mu: 5.3, r: r, vocab: vocab, names: names, zipf: rand.NewZipf(r, 1.05, 2.7, uint64(len(vocab)-1))}
}

var emoji = []string{"🙂", "🚀", "👍", "🎉", "🤔", "🔥"}

// cyrillic maps Latin letters to Cyrillic ones for the "ru" documents.
var cyrillic = strings.NewReplacer("sh", "ш", "ch", "ч", "th", "т", "a", "а", "b", "б", "c", "к",
	"d", "д", "e", "е", "f", "ф", "g", "г", "h", "х", "i", "и", "j", "ж", "k", "к", "l", "л",
	"m", "м", "n", "н", "o", "о", "p", "п", "q", "к", "r", "р", "s", "с", "t", "т", "u", "у",
	"v", "в", "w", "в", "x", "кс", "y", "ы", "z", "з")

var (
	umlauts = strings.NewReplacer("a", "ä", "o", "ö", "u", "ü", "ss", "ß")
	accents = strings.NewReplacer("e", "é", "a", "à", "c", "ç")
)

// Document returns document id: one to many paragraphs (log-normal length) of sentences.
func (g *Generator) Document(id int64) Document {
	r := g.r
	lang := "en"
	switch p := r.Float64(); {
	case p < 0.02:
		lang = "ru"
	case p < 0.05:
		lang = "de"
	case p < 0.07:
		lang = "fr"
	}
	words := int(math.Exp(g.mu+0.9*r.NormFloat64())) + 5 // median ~200 words by default, long tail
	var b strings.Builder
	sentence := 0
	for n := 0; n < words; {
		k := 4 + r.IntN(12) + r.IntN(12)
		for i := 0; i < k; i++ {
			w := g.word(lang)
			if i == 0 {
				w = capitalize(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			if i < k-1 && r.Float64() < 0.07 {
				b.WriteByte(',')
			}
		}
		n += k
		switch p := r.Float64(); {
		case p < 0.08:
			b.WriteByte('?')
		case p < 0.12:
			b.WriteByte('!')
		case p < 0.13:
			b.WriteString("…")
		case p < 0.14:
			b.WriteString(" " + emoji[r.IntN(len(emoji))])
		default:
			b.WriteByte('.')
		}
		sentence++
		if n >= words {
			break
		}
		if sentence >= 2+r.IntN(6) {
			b.WriteString("\n\n")
			sentence = 0
		} else {
			b.WriteByte(' ')
		}
	}
	score := math.Round(1e4*(1-math.Pow(r.Float64(), 2))) / 1e4
	return Document{ID: id, Text: b.String(), Meta: Meta{Lang: lang, Score: score}}
}

// word returns one word of a document in lang: a Zipf-ranked vocabulary word, a number, or a
// capitalized name.
func (g *Generator) word(lang string) string {
	r := g.r
	switch p := r.Float64(); {
	case p < 0.015:
		switch r.IntN(4) {
		case 0:
			return strconv.Itoa(1800 + r.IntN(230))
		case 1:
			return strconv.FormatFloat(float64(r.IntN(1000))/10, 'f', 1, 64) + "%"
		case 2:
			return "$" + strconv.Itoa(1+r.IntN(5000))
		default:
			return strconv.Itoa(r.IntN(100))
		}
	case p < 0.04:
		return g.names[r.IntN(len(g.names))]
	}
	w := g.vocab[g.zipf.Uint64()]
	switch lang {
	case "ru":
		return cyrillic.Replace(strings.ToLower(w))
	case "de":
		if r.IntN(8) == 0 {
			return umlauts.Replace(w)
		}
	case "fr":
		if r.IntN(8) == 0 {
			return accents.Replace(w)
		}
	}
	return w
}

func capitalize(w string) string {
	c, n := utf8.DecodeRuneInString(w)
	if c == utf8.RuneError || n == 0 {
		return w
	}
	return strings.ToUpper(string(c)) + w[n:]
}
