package component

// Component is a decoded component: its definitions in index-space order,
// ready to be instantiated, and its imports and exports with their types.
//
// Index spaces are kept as slices indexed by the binary's indices:
// Funcs[i] is component function i, CoreFuncs[i] core function i, and so
// on. Every index stored in a definition was checked against its space
// when it was decoded.
type Component struct {
	// Modules holds the core modules the component embeds, as bytes for
	// the core engine to compile, in core module index order.
	Modules [][]byte
	// CoreInstances is the core instance index space.
	CoreInstances []CoreInstance
	// CoreFuncs, CoreMemories, CoreTables and CoreGlobals are the core
	// index spaces.
	CoreFuncs    []CoreFunc
	CoreMemories []CoreExportRef
	CoreTables   []CoreExportRef
	CoreGlobals  []CoreExportRef
	// Components holds the nested components (section 4), in component
	// index order.
	Components []*Component
	// Instances is the component instance index space.
	Instances []Instance
	// Funcs is the component function index space.
	Funcs []FuncDef
	// Types is the component type index space.
	Types []*Type
	// Imports and Exports are the component's imports and exports, in
	// binary order.
	Imports []Import
	Exports []Export
	// Custom holds the custom sections, in binary order (names and raw
	// contents; for example "package-docs", the WIT doc comments, or
	// "producers").
	Custom []CustomSection
}

// CustomSection is a custom section: its name and raw contents.
type CustomSection struct {
	Name string
	Data []byte
}

// CoreInstance is a core instance definition: either the instantiation of
// core module Module with Args (Module >= 0), or a bag of Exports gathered
// from other definitions (Module == -1).
type CoreInstance struct {
	Module  int
	Args    []CoreArg
	Exports []CoreExport
}

// CoreArg is a `with` argument of a core instantiation: the import module
// name Name is satisfied by core instance Instance.
type CoreArg struct {
	Name     string
	Instance int
}

// CoreExport is one export of an inline core instance: Name refers to the
// core definition Index of sort Sort (SortCoreFunc, SortCoreTable,
// SortCoreMemory, SortCoreGlobal).
type CoreExport struct {
	Name  string
	Sort  Sort
	Index int
}

// CoreExportRef names an export of a core instance (the target of an
// `alias core export`).
type CoreExportRef struct {
	Instance int
	Name     string
}

// CoreFuncKind says where a core function comes from.
type CoreFuncKind uint8

// The sources of a core function.
const (
	// CoreFuncAlias is an export of a core instance (Alias).
	CoreFuncAlias CoreFuncKind = iota + 1
	// CoreFuncLower is `canon lower` of component function Func with Opts.
	CoreFuncLower
	// CoreFuncResourceNew, CoreFuncResourceDrop and CoreFuncResourceRep
	// are the resource built-ins for Resource.
	CoreFuncResourceNew
	CoreFuncResourceDrop
	CoreFuncResourceRep
)

// CoreFunc is a core function definition.
type CoreFunc struct {
	Kind     CoreFuncKind
	Alias    CoreExportRef
	Func     int
	Opts     Options
	Resource *ResourceType
}

// Encoding is a canonical-ABI string encoding.
type Encoding uint8

// The string encodings of the canonical ABI.
const (
	UTF8 Encoding = iota
	UTF16
	Latin1UTF16
)

// String returns the encoding as the text format spells it.
func (e Encoding) String() string {
	switch e {
	case UTF16:
		return "utf16"
	case Latin1UTF16:
		return "latin1+utf16"
	}
	return "utf8"
}

// Options are the canonical options of a lift or lower: the string
// encoding and the core memory, realloc and post-return functions (core
// indices, -1 when absent).
type Options struct {
	Encoding   Encoding
	Memory     int
	Realloc    int
	PostReturn int
}

// FuncKind says where a component function comes from.
type FuncKind uint8

// The sources of a component function.
const (
	// FuncImport is the component's import Import.
	FuncImport FuncKind = iota + 1
	// FuncAlias is export Name of component instance Instance.
	FuncAlias
	// FuncLift is `canon lift` of core function CoreFunc with Opts.
	FuncLift
	// FuncOuter is function Index of an enclosing component; the decoder
	// refuses it (only types, modules and components alias outward).
)

// FuncDef is a component function definition, with its type.
type FuncDef struct {
	Kind     FuncKind
	Import   int
	Instance int
	Name     string
	CoreFunc int
	Opts     Options
	Type     *Type
}

// InstanceKind says where a component instance comes from.
type InstanceDefKind uint8

// The sources of a component instance.
const (
	// InstanceImport is the component's import Import.
	InstanceImport InstanceDefKind = iota + 1
	// InstanceInstantiate instantiates nested component Component with Args.
	InstanceInstantiate
	// InstanceExports is a bag of Args (name, sort, index) gathered from
	// other definitions.
	InstanceExports
	// InstanceAlias is export Name of component instance Instance.
	InstanceAlias
)

// Instance is a component instance definition. Type is its instance type
// when it is known from the binary (imports, aliases), else nil.
type Instance struct {
	Kind      InstanceDefKind
	Import    int
	Component int
	Instance  int
	Name      string
	Args      []Arg
	Type      *Type
}

// Arg is a named reference to a component-level definition: an argument
// of an instantiation or an export of an inline instance.
type Arg struct {
	Name  string
	Sort  Sort
	Index int
}

// Import is one import of the component. Extern's Type is the imported
// function, instance or component type, or the imported type.
type Import struct {
	Extern
}

// Export is one export of the component: Index is the exported definition
// in the index space of Sort; Extern's Type is its type (the ascribed one
// when the binary gives one).
type Export struct {
	Extern
	Index int
}

// Docs returns the contents of the `package-docs` custom section (the WIT
// doc comments wit-component embeds), or nil.
func (c *Component) Docs() []byte {
	for _, s := range c.Custom {
		if s.Name == "package-docs" {
			return s.Data
		}
	}
	return nil
}
