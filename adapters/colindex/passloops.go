package colindex

// The loops of a pass (see pass.go): over posting lists, and over a range
// of rows, one loop per combination of column widths as in block.go.

// countPositions counts the rows at the positions, all of which pass
// the filter of column from: that column is read only for its list.
func (t *tally) countPositions(f passFilters, c *catIndex, from *codeColumn, positions []int32) {
	if from == &c.question && !f.questions {
		// The usual case (a question filter): the combination and the
		// answer of each row, read in their own widths.
		switch c.combo.width {
		case 1:
			positionAnswers(t, f, c, c.combo.u8, positions)
		case 2:
			positionAnswers(t, f, c, c.combo.u16, positions)
		default:
			positionAnswers(t, f, c, c.combo.u32, positions)
		}
		return
	}
	readQuestion := f.questions || from != &c.question
	readAnswer := from != &c.answer
	for _, r := range positions {
		combo, q, a := c.combo.get(int(r)), uint32(0), uint32(0)
		cp, qp, ap := f.combo[combo], uint8(1), uint8(1)
		if readQuestion {
			q = c.question.get(int(r))
			qp = f.question[q]
		}
		if readAnswer {
			a = c.answer.get(int(r))
			ap = f.answer[a]
		}
		t.perCombo[combo] += int64(qp & ap)
		if f.questions {
			t.question[q] += int64(cp & ap)
		}
		t.answer[a] += int64(cp & qp)
	}
}

func positionAnswers[C codeWidth](t *tally, f passFilters, c *catIndex, combos []C, positions []int32) {
	switch c.answer.width {
	case 1:
		positionRows(t, f, combos, c.answer.u8, positions)
	case 2:
		positionRows(t, f, combos, c.answer.u16, positions)
	default:
		positionRows(t, f, combos, c.answer.u32, positions)
	}
}

// positionRows counts the rows at the positions, which pass the question
// filter, by combination (those passing the answer filter) and by answer
// (those passing the combination filter).
func positionRows[C, A codeWidth](t *tally, f passFilters, combos []C, answers []A, positions []int32) {
	perCombo, perAnswer, comboPass, answerPass := t.perCombo, t.answer, f.combo, f.answer
	for _, r := range positions {
		combo, a := combos[r], answers[r]
		perCombo[combo] += int64(answerPass[a])
		perAnswer[a] += int64(comboPass[combo])
	}
}

// countRange counts the rows [lo, hi), reading each column in its own
// width (see block.go): one loop per combination of widths.
func (t *tally) countRange(f passFilters, c *catIndex, lo, hi int) {
	switch c.combo.width {
	case 1:
		passQuestions(t, f, c, c.combo.u8[lo:hi], lo)
	case 2:
		passQuestions(t, f, c, c.combo.u16[lo:hi], lo)
	default:
		passQuestions(t, f, c, c.combo.u32[lo:hi], lo)
	}
}

func passQuestions[C codeWidth](t *tally, f passFilters, c *catIndex, combos []C, lo int) {
	hi := lo + len(combos)
	switch c.question.width {
	case 1:
		passAnswers(t, f, c, combos, c.question.u8[lo:hi], lo)
	case 2:
		passAnswers(t, f, c, combos, c.question.u16[lo:hi], lo)
	default:
		passAnswers(t, f, c, combos, c.question.u32[lo:hi], lo)
	}
}

func passAnswers[C, Q codeWidth](t *tally, f passFilters, c *catIndex, combos []C, questions []Q, lo int) {
	hi := lo + len(combos)
	switch c.answer.width {
	case 1:
		passRows(t, f, combos, questions, c.answer.u8[lo:hi])
	case 2:
		passRows(t, f, combos, questions, c.answer.u16[lo:hi])
	default:
		passRows(t, f, combos, questions, c.answer.u32[lo:hi])
	}
}

func passRows[C, Q, A codeWidth](t *tally, f passFilters, combos []C, questions []Q, answers []A) {
	questions, answers = questions[:len(combos)], answers[:len(combos)]
	perCombo, perQuestion, perAnswer := t.perCombo, t.question, t.answer
	if f.none {
		for k, combo := range combos {
			perCombo[combo]++
			perAnswer[answers[k]]++
		}
		if f.questions {
			for _, q := range questions {
				perQuestion[q]++
			}
		}
		return
	}
	// The question counts are megabytes, each increment likely a cache
	// miss: only the rows that count in them are counted, a block at a
	// time, their positions gathered without a branch.
	comboPass, questionPass, answerPass := f.combo, f.question, f.answer
	var counted [blockRows]int32
	for from := 0; from < len(combos); from += blockRows {
		to := min(from+blockRows, len(combos))
		n := 0
		if f.comboOnly {
			if f.combos {
				for _, combo := range combos[from:to] {
					perCombo[combo]++
				}
			}
			for k := from; k < to; k++ {
				counted[n] = int32(k) // #nosec G115 -- a CAT holds fewer than 2^31 rows
				n += int(comboPass[combos[k]])
			}
			for _, k := range counted[:n] {
				perAnswer[answers[k]]++
			}
		} else {
			for k := from; k < to; k++ {
				combo, q, a := combos[k], questions[k], answers[k]
				cp, qp, ap := comboPass[combo], questionPass[q], answerPass[a]
				perCombo[combo] += int64(qp & ap)
				perAnswer[a] += int64(cp & qp)
				counted[n] = int32(k) // #nosec G115 -- a CAT holds fewer than 2^31 rows
				n += int(cp & ap)
			}
		}
		if f.questions {
			for _, k := range counted[:n] {
				perQuestion[questions[k]]++
			}
		}
	}
}
