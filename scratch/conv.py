import re,sys
def convert(path, mods):
    """mods: list of (modname, TypeName, kind) kind='flags' or ('named', int)"""
    s=open(path).read()
    for mod,ty,kind in mods:
        m=re.search(r'((?:///[^\n]*\n)*)pub mod '+mod+r' \{\n(.*?)\n\}\n', s, re.S)
        assert m, (path,mod)
        doc=m.group(1); body=m.group(2)
        items=re.findall(r'((?:\s*///[^\n]*\n)*)\s*pub const (\w+): (\w+) = ([^;]+);', body+"\n")
        intty=items[0][2]
        if kind=='flags':
            out=doc.replace('\n','\n    ').rstrip(' ')
            lines=["crate::flag_set! {", "    "+out.rstrip()+"" if doc else "", f"    pub struct {ty}: {intty} {{"]
            lines=[l for l in lines if l]
            for d,n,t,v in items:
                for dl in d.strip().split('\n'):
                    if dl.strip(): lines.append("        "+dl.strip())
                lines.append(f"        const {n} = {v.strip()};")
            lines.append("    }"); lines.append("}")
        else:
            out=doc.replace('\n','\n    ').rstrip(' ')
            lines=["crate::proto::names::named! {", "    "+out.rstrip(), f"    pub struct {ty}({intty}) {{"]
            for d,n,t,v in items:
                for dl in d.strip().split('\n'):
                    if dl.strip(): lines.append("        "+dl.strip())
                lines.append(f"        {n} = {v.strip()},")
            lines.append("    }"); lines.append("}")
        s=s[:m.start()]+"\n".join(lines)+"\n"+s[m.end():]
    open(path,'w').write(s)
if __name__=='__main__':
    pass

def set_fields(path, specs):
    """specs: list of (struct, field, newtype); newtype 'GENERIC' makes struct generic over F"""
    s=open(path).read()
    for st,field,nt in specs:
        m=re.search(r'pub struct '+st+r' \{\n(.*?)\n    \}', s, re.S)
        assert m,(path,st)
        body=m.group(1)
        fm=re.search(r'(pub '+field+r': )(\w+)(,)', body)
        assert fm,(path,st,field)
        if nt=='GENERIC':
            nb=body[:fm.start()]+fm.group(1)+'F'+fm.group(3)+body[fm.end():]
            hdr='pub struct '+st+'<F = '+fm.group(2)+'> {\n'
        else:
            nb=body[:fm.start()]+fm.group(1)+nt+fm.group(3)+body[fm.end():]
            hdr='pub struct '+st+' {\n'
        s=s[:m.start()]+hdr+nb+'\n    }'+s[m.end():]
    open(path,'w').write(s)

def drop_mod(path, mod):
    s=open(path).read()
    m=re.search(r'((?:///[^\n]*\n)*)pub mod '+mod+r' \{\n(.*?)\n\}\n\n?', s, re.S)
    assert m,(path,mod)
    s=s[:m.start()]+s[m.end():]
    open(path,'w').write(s)

def rows(path, specs):
    """specs: (ProcName, NewArgsType) -> edit only the args type token in the row"""
    s=open(path).read()
    for proc,new in specs:
        m=re.search(r'(\n    '+proc+r' = \d+: )(\w+)( =>)', s)
        assert m,(path,proc)
        s=s[:m.start()]+m.group(1)+new+m.group(3)+s[m.end():]
    open(path,'w').write(s)
