#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

#define MESSAGE_MAX 512

static _Thread_local char tls_message[MESSAGE_MAX];
static _Thread_local hml_error tls_error = { HML_OK, NULL };

const hml_error *hml_error_last(void)
{
	if (!tls_error.message)
		tls_error.message = tls_message;
	return &tls_error;
}

void hml_error_clear(void)
{
	tls_message[0] = '\0';
	tls_error.code = HML_OK;
	tls_error.message = tls_message;
}

/* What a message keeps of its start when it is too long. */
#define MESSAGE_HEAD 160

int hml__error_set(int code, const char *fmt, ...)
{
	static _Thread_local char full[8192];
	va_list ap;
	char *nl;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(full, sizeof(full), fmt, ap);
	va_end(ap);
	/* Messages are one line: a multi-line text from a dependency (libtorch
	 * exceptions carry back-traces) is cut at its first newline. */
	if ((nl = strchr(full, '\n')) != NULL)
		*nl = '\0';
	/* Too long (a path of thousands of characters): the middle goes, not
	 * the end, which holds the reason ("cannot open 'aaa...zzz': no such
	 * file"). */
	len = strlen(full);
	if (len < sizeof(tls_message))
		memcpy(tls_message, full, len + 1);
	else
		snprintf(tls_message, sizeof(tls_message), "%.*s...%s", MESSAGE_HEAD, full,
		         full + len - (sizeof(tls_message) - 1 - MESSAGE_HEAD - 3));
	tls_error.code = code;
	tls_error.message = tls_message;
	return code;
}

int hml__error_oom(void)
{
	snprintf(tls_message, sizeof(tls_message), "out of memory");
	tls_error.code = HML_ENOMEM;
	tls_error.message = tls_message;
	return HML_ENOMEM;
}

void hml__error_save(hml__error_saved *s)
{
	s->code = tls_error.code;
	snprintf(s->message, sizeof(s->message), "%s", tls_message);
}

void hml__error_restore(const hml__error_saved *s)
{
	snprintf(tls_message, sizeof(tls_message), "%s", s->message);
	tls_error.code = s->code;
	tls_error.message = tls_message;
}

const char *hml_strerror(int code)
{
	switch (code) {
	case HML_OK: return "success";
	case HML_ERROR: return "failure";
	case HML_EINVALID: return "invalid argument";
	case HML_ENOMEM: return "out of memory";
	case HML_ENOTFOUND: return "not found";
	case HML_EIO: return "input/output error";
	case HML_ESHAPE: return "shape mismatch";
	case HML_ERANGE: return "index out of range";
	case HML_ENOTSUPPORTED: return "not supported";
	case HML_EMODEL: return "model error";
	case HML_ESYNTAX: return "syntax error";
	case HML_EEXISTS: return "already exists";
	case HML_ELOCKED: return "locked by another process";
	default: return "unknown error";
	}
}
