// Package insights finds the problems people raise in support conversations
// and groups similar ones: a deterministic extractor (Extract) for when no
// language model is configured, and TF-IDF vectors compared by cosine
// similarity (Corpus, Cluster) to group issues by their text.
package insights

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Vector is a sparse, L2-normalised TF-IDF vector: term → weight.
type Vector map[string]float64

// Cosine is the cosine similarity of two vectors (0 when either is empty).
func Cosine(a, b Vector) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	var dot, na, nb float64
	for t, w := range a {
		dot += w * b[t]
		na += w * w
	}
	for _, w := range b {
		nb += w * w
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// add adds w·v to c in place.
func (c Vector) add(v Vector, w float64) {
	for t, x := range v {
		c[t] += w * x
	}
}

// Corpus holds the document frequencies of a set of texts, so each text can
// be weighed against all of them.
type Corpus struct {
	docs int
	df   map[string]int
}

// NewCorpus counts the terms of texts.
func NewCorpus(texts []string) *Corpus {
	c := &Corpus{docs: len(texts), df: map[string]int{}}
	for _, t := range texts {
		seen := map[string]bool{}
		for _, term := range Terms(t) {
			if !seen[term] {
				seen[term] = true
				c.df[term]++
			}
		}
	}
	return c
}

// Vector is the TF-IDF vector of text: term frequency (1 + log tf) times the
// smoothed inverse document frequency log((1+N)/(1+df)) + 1, normalised.
func (c *Corpus) Vector(text string) Vector {
	tf := map[string]int{}
	for _, term := range Terms(text) {
		tf[term]++
	}
	v := make(Vector, len(tf))
	var norm float64
	for term, n := range tf {
		idf := math.Log(float64(1+c.docs)/float64(1+c.df[term])) + 1
		w := (1 + math.Log(float64(n))) * idf
		v[term] = w
		norm += w * w
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for term := range v {
			v[term] /= norm
		}
	}
	return v
}

// Terms are the words of text that carry meaning: lower-cased, stop words
// dropped, plural and verb endings folded ("errors" and "error", "crashing"
// and "crash") so the same complaint phrased differently shares its terms.
func Terms(text string) []string {
	var out []string
	text = phraseRE.ReplaceAllStringFunc(strings.ToLower(text), func(p string) string {
		return phrases[strings.Join(strings.Fields(p), " ")]
	})
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.Trim(w, "'")
		if i := strings.IndexByte(w, '\''); i > 0 { // can't → can, user's → user
			w = w[:i]
		}
		if len([]rune(w)) < 2 || stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem folds the commonest English inflections. It is deliberately light:
// two words that fold together must mean the same thing.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:n-1]
	}
	// Doubled final consonants left by -ing/-ed: "logged", "logging" → "log".
	if m := len(w); m > 3 && w[m-1] == w[m-2] && !strings.ContainsRune("aeiousl", rune(w[m-1])) {
		w = w[:m-1]
	}
	return strings.TrimSuffix(w, "e") // "crashe(s)", "update(d)" → "crash", "updat"
}

// phrases are multi-word spellings of one term.
var phrases = map[string]string{
	"log in": "login", "logged in": "login", "logging in": "login", "log into": "login",
	"sign in": "login", "signed in": "login", "signing in": "login", "sign into": "login",
	"log out": "logout", "logged out": "logout", "sign out": "logout", "signed out": "logout",
	"sign up": "signup", "signed up": "signup", "set up": "setup",
}

var phraseRE = regexp.MustCompile(`\b(log(ged|ging)?\s+(in|into|out)|sign(ed|ing)?\s+(in|into|out|up)|set\s+up)\b`)

// stopWords are words too common to tell complaints apart, including those
// that say something is wrong without saying what.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again all am an and any are as at be because been
		before being below between both but by can could did do does doing don down during each few for from
		further had has have having he her here hers him his how i if in into is it its itself just me more
		most my no nor not now of off on once only or other our ours out over own same she should so some
		such than that the their theirs them then there these they this those through to too under until up
		very was we were what when where which while who whom why will with would you your yours also get
		got getting hi hello thanks thank please help still even any anyone anything really since keep
		keeps again way when whenever every everytime time today yesterday tried try trying us let
		cannot unable able fail fails failed failing error errors wrong broken issue issues problem problems
		bug bugs work works worked working seem seems say says said anymore although`) {
		m[w] = true
	}
	return m
}()

// Cluster groups texts by cosine similarity. assigned gives the cluster of
// the texts already placed (-1: none yet): existing clusters keep their
// members and their numbers. Each new text, in order, joins the cluster
// whose centroid it is most similar to when that similarity reaches
// threshold, and starts a new cluster otherwise. Then, since the first
// texts of a batch decide where its clusters start, a new cluster whose
// centroid is that similar to an older cluster's is merged into it, until
// none is. The result holds a cluster number for every text, new clusters
// numbered after the existing ones (merged numbers are left unused).
func Cluster(vectors []Vector, assigned []int, threshold float64) []int {
	out := append([]int(nil), assigned...)
	centroids := map[int]Vector{}
	next := 0
	for i, c := range out {
		if c < 0 {
			continue
		}
		if centroids[c] == nil {
			centroids[c] = Vector{}
		}
		centroids[c].add(vectors[i], 1)
		next = max(next, c+1)
	}
	firstNew := next
	for i, c := range out {
		if c >= 0 {
			continue
		}
		best, bestSim := -1, threshold
		for _, id := range sortedKeys(centroids) {
			if sim := Cosine(vectors[i], centroids[id]); sim >= bestSim {
				best, bestSim = id, sim
			}
		}
		if best < 0 {
			best = next
			next++
			centroids[best] = Vector{}
		}
		centroids[best].add(vectors[i], 1)
		out[i] = best
	}
	for merged := true; merged; {
		merged = false
		for _, c := range sortedKeys(centroids) {
			if c < firstNew {
				continue
			}
			best, bestSim := -1, threshold
			for _, o := range sortedKeys(centroids) {
				if o >= c {
					break
				}
				if sim := Cosine(centroids[c], centroids[o]); sim >= bestSim {
					best, bestSim = o, sim
				}
			}
			if best < 0 {
				continue
			}
			centroids[best].add(centroids[c], 1)
			delete(centroids, c)
			for i := range out {
				if out[i] == c {
					out[i] = best
				}
			}
			merged = true
		}
	}
	return out
}

// Central is the index, among members, of the vector closest to their
// centroid: the most representative text of a cluster.
func Central(vectors []Vector, members []int) int {
	centroid := Vector{}
	for _, i := range members {
		centroid.add(vectors[i], 1)
	}
	best, bestSim := members[0], -1.0
	for _, i := range members {
		if sim := Cosine(vectors[i], centroid); sim > bestSim {
			best, bestSim = i, sim
		}
	}
	return best
}

func sortedKeys(m map[int]Vector) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
