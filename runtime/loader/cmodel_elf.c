/*
 * runtime/loader/cmodel_elf.c - a compiled model's entry found in its ELF
 * file before the file is loaded (loader.h: hml__cmodel_elf_check).
 *
 * dlopen runs a shared object's constructors before dlsym can say whether
 * it exports hml_cmodel_v3 (or an older version's hml_cmodel_v2 or
 * hml_cmodel_v1), so the symbol is looked up here, in the file's dynamic
 * symbol table, and its constant fields (magic, ABI version, size,
 * tag: data that needs no relocation) are read from the section that holds
 * it. Every offset and size read from the file is checked against the
 * mapping before use.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "hml/cmodel.h"
#include "loader/loader.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#else
#define HOST_MACHINE EM_NONE   /* any machine: dlopen checks it */
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* The part of the entry struct that is plain data, as in the file. */
typedef struct {
	uint32_t magic, abi_version, size, dtype;
	char tag[24];
} entry_head;

static int refuse(const char *path, const char *why)
{
	return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': %s (refused without "
	                      "loading it)", path, why);
}

/* Is [off, off + len) inside a file of `size` bytes? */
static int inside(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* Section i's header (the table is inside the file: header_ok), or NULL. */
static const Elf64_Shdr *section(const unsigned char *map, const Elf64_Ehdr *eh, size_t i)
{
	if (i >= eh->e_shnum)
		return NULL;
	return (const Elf64_Shdr *)(const void *)(map + eh->e_shoff + i * sizeof(Elf64_Shdr));
}

static int header_ok(const unsigned char *map, size_t size, const char *path)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)map;

	if (size < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != HOST_DATA)
		return refuse(path, "not a 64-bit ELF object of this machine's byte order");
	if (eh->e_type != ET_DYN)
		return refuse(path, "not a shared object");
	if (HOST_MACHINE != EM_NONE && eh->e_machine != HOST_MACHINE)
		return refuse(path, "built for another machine");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
	    !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size) ||
	    eh->e_shoff % 8 != 0)
		return refuse(path, "its section headers are missing or out of the file");
	return 0;
}

/* The file offset of `sym`'s bytes, or 0 when they are not in the file. */
static uint64_t symbol_offset(const unsigned char *map, size_t size, const Elf64_Ehdr *eh,
                              const Elf64_Sym *sym)
{
	const Elf64_Shdr *sh = section(map, eh, sym->st_shndx);

	if (!sh || sh->sh_type == SHT_NOBITS || sym->st_value < sh->sh_addr ||
	    sym->st_size > sh->sh_size || sym->st_value - sh->sh_addr > sh->sh_size - sym->st_size ||
	    !inside(sh->sh_offset, sh->sh_size, size))
		return 0;
	return sh->sh_offset + (sym->st_value - sh->sh_addr);
}

/* The defined, global data symbol `name` in the table `dynsym`, or NULL. */
static const Elf64_Sym *find_entry(const unsigned char *map, size_t size, const Elf64_Ehdr *eh,
                                   const Elf64_Shdr *dynsym, const char *name)
{
	const Elf64_Shdr *strs = section(map, eh, dynsym->sh_link);
	size_t n, k = strlen(name) + 1;

	if (!strs || dynsym->sh_entsize != sizeof(Elf64_Sym) || dynsym->sh_offset % 8 != 0 ||
	    !inside(dynsym->sh_offset, dynsym->sh_size, size) ||
	    !inside(strs->sh_offset, strs->sh_size, size))
		return NULL;
	n = dynsym->sh_size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(map + dynsym->sh_offset) + i;

		if (sym->st_name >= strs->sh_size || strs->sh_size - sym->st_name < k ||
		    memcmp(map + strs->sh_offset + sym->st_name, name, k) != 0)
			continue;
		if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
		    ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
		    ELF64_ST_BIND(sym->st_info) != STB_GLOBAL)
			continue;
		return sym;
	}
	return NULL;
}

/* What each ABI version read exports, newest first: its symbol, struct
 * size and tag. */
static const hml__cmodel_version versions[] = {
	{ 3, HML_CMODEL_ENTRY, sizeof(hml_cmodel_v3_info), HML_CMODEL_TAG },
	{ 2, HML_CMODEL_V2_ENTRY, sizeof(hml_cmodel_v2_info), HML_CMODEL_V2_TAG },
	{ 1, HML_CMODEL_V1_ENTRY, sizeof(hml_cmodel_v1_info), HML_CMODEL_V1_TAG },
};

const hml__cmodel_version *hml__cmodel_version_of(unsigned abi)
{
	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++)
		if (versions[v].version == abi)
			return &versions[v];
	return NULL;
}

/* The entry of the newest version the file exports, or NULL (*v its index). */
static const Elf64_Sym *find_any(const unsigned char *map, size_t size, const Elf64_Ehdr *eh,
                                 size_t *v)
{
	for (*v = 0; *v < sizeof(versions) / sizeof(versions[0]); (*v)++)
		for (size_t i = 0; i < eh->e_shnum; i++) {
			const Elf64_Shdr *sh = section(map, eh, i);
			const Elf64_Sym *sym;

			if (sh->sh_type == SHT_DYNSYM &&
			    (sym = find_entry(map, size, eh, sh, versions[*v].entry)))
				return sym;
		}
	return NULL;
}

int hml__cmodel_elf_check(const unsigned char *map, size_t size, const char *path)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)map;
	const Elf64_Sym *sym;
	entry_head head;
	uint64_t off;
	size_t v;
	int rc;

	if ((rc = header_ok(map, size, path)) < 0)
		return rc;
	if (!(sym = find_any(map, size, eh, &v)))
		return refuse(path, "it exports no '" HML_CMODEL_ENTRY "' (nor an older version's '"
		              HML_CMODEL_V2_ENTRY "' or '" HML_CMODEL_V1_ENTRY "') data symbol (not "
		              "a model compiled by hml)");
	if (sym->st_size != versions[v].size || !(off = symbol_offset(map, size, eh, sym)))
		return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': its '%s' does "
		                      "not have the layout of ABI version %u (refused without loading "
		                      "it)", path, versions[v].entry, versions[v].version);
	memcpy(&head, map + off, sizeof(head));
	if (head.abi_version != versions[v].version && head.magic == HML_CMODEL_MAGIC)
		return hml__error_set(HML_ENOTSUPPORTED, "cannot open compiled model '%s': ABI "
		                      "version %u, this runtime reads 1 to %u (compile it again with "
		                      "this hml)", path, (unsigned)head.abi_version,
		                      HML_CMODEL_ABI_VERSION);
	if (head.magic != HML_CMODEL_MAGIC || head.size != versions[v].size ||
	    memcmp(head.tag, versions[v].tag, strlen(versions[v].tag) + 1) != 0)
		return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': its '%s' has a "
		                      "bad magic number, size or tag (refused without loading it)",
		                      path, versions[v].entry);
	return (int)versions[v].version;
}
