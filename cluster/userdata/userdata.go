// Package userdata renders the windows-user-data secret's script: what a new Windows Machine runs at its
// first boot so that WMCO (or wmcon, standalone) can reach it over SSH with the cloud-private-key key.
// WMCO's secret controller writes it when the operator is installed; without the operator wmcon writes it
// itself (cluster.Keys), and the operator stand-in (sim/operator) uses the same text. The script
// is wmcon's own, written from what the operator's does: a disabled Administrator account enabled, OpenSSH
// server installed (retried while the network comes up) and started at boot, TCP 22 (SSH), 10250 (kubelet) and
// 9182 (windows_exporter) open, sshd accepting keys only, exactly one key in administrators_authorized_keys
// (readable by Administrators and SYSTEM alone) and, on AWS, last, EC2Launch v2 recent enough to restore the
// metadata routes at every boot. conformance_test.go holds it against WMCO 11's own user data.
package userdata

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// MinEC2LaunchVersion is the oldest EC2Launch v2 whose add-routes task survives reboots (--persistent).
const MinEC2LaunchVersion = "2.0.2107"

// ec2LaunchMSI is where Amazon publishes the current EC2Launch v2 installer.
const ec2LaunchMSI = "https://s3.amazonaws.com/amazon-ec2launch-v2/windows/amd64/latest/AmazonEC2Launch.msi"

// ForKey renders the user data authorizing pub on platform (an infrastructure platform type: "AWS",
// "Azure", "GCP", "VSphere", "Nutanix", "None", "BareMetal"; compared without case).
func ForKey(pub ssh.PublicKey, platform string) []byte {
	return Script(string(ssh.MarshalAuthorizedKey(pub)), platform)
}

// Script renders the user data for an authorized key line (ssh.MarshalAuthorizedKey's form; a missing
// trailing newline is added, so the file on the host always ends with one). Every platform but GCP runs it
// through EC2Launch / cloudbase-init, which want it wrapped in <powershell> and marked persistent; GCP's
// agent runs the bare script (its MachineSet puts it under windows-startup-script-ps1). SSH is set up first:
// on AWS the EC2Launch step comes last, so a download that fails (a private VPC without S3) leaves the
// machine reachable.
func Script(authorizedKey, platform string) []byte {
	line := strings.TrimRight(authorizedKey, "\r\n") + "\n"
	var b strings.Builder
	b.WriteString(preamble)
	b.WriteString(administrator)
	b.WriteString(openSSH)
	b.WriteString("$authorizedKey = @'\n" + line + "'@\n")
	b.WriteString(authorize)
	if strings.EqualFold(platform, "AWS") {
		b.WriteString(awsRoutes)
	}
	if strings.EqualFold(platform, "GCP") {
		return []byte(b.String())
	}
	return []byte("<powershell>\n" + b.String() + "</powershell>\n<persist>true</persist>\n")
}

const preamble = `# windows-user-data written by wmcon: SSH access for the key in cloud-private-key.
$ErrorActionPreference = 'Stop'
`

// administrator enables the Administrator account where the image ships it disabled (GCP's do), with a
// random password nobody is told: SSH logs in with the key only. Where a capi user exists (Azure), that is
// the account used, and Administrator is left as it is.
const administrator = `# Administrator enabled (GCP images ship it disabled), with a random password: SSH logs in with the key.
if (-not (Get-LocalUser -Name 'capi' -ErrorAction SilentlyContinue)) {
  $admin = Get-LocalUser -Name 'Administrator' -ErrorAction SilentlyContinue
  if ($admin -and -not $admin.Enabled) {
    $random = New-Object byte[] 24
    [System.Security.Cryptography.RandomNumberGenerator]::Create().GetBytes($random)
    $admin | Set-LocalUser -Password (ConvertTo-SecureString -AsPlainText -Force ('Aa1!' + [Convert]::ToBase64String($random)))
    $admin | Enable-LocalUser
  }
}
`

// awsRoutes keeps the instance metadata reachable after reboots: EC2Launch v2 from 2.0.2107 on can make
// its add-routes task persistent; an older or missing EC2Launch is replaced by the current one first. A
// failure is reported, not fatal: SSH is already up, and the next boot (persistent user data) tries again.
var awsRoutes = `# AWS: EC2Launch v2 ` + MinEC2LaunchVersion + ` or later, and the metadata routes restored at every boot.
try {
  $ec2Launch = Join-Path $env:ProgramFiles 'Amazon\EC2Launch\EC2Launch.exe'
  $ec2LaunchVersion = [version]'0.0'
  if (Test-Path $ec2Launch) {
    $ec2LaunchVersion = [version](Get-Item $ec2Launch).VersionInfo.ProductVersion
  }
  if ($ec2LaunchVersion -lt [version]'` + MinEC2LaunchVersion + `') {
    $msi = Join-Path $env:TEMP 'AmazonEC2Launch.msi'
    Invoke-WebRequest -UseBasicParsing -Uri '` + ec2LaunchMSI + `' -OutFile $msi
    Start-Process -Wait -FilePath msiexec.exe -ArgumentList @('/i', $msi, '/qn')
    Remove-Item -Force $msi
  }
  & $ec2Launch run-task add-routes --persistent
} catch {
  Write-Warning "EC2Launch v2 ` + MinEC2LaunchVersion + ` or later could not be installed, so the metadata routes may not survive a reboot (SSH works): $_"
}
`

// openSSH installs the OpenSSH server, which downloads it: at first boot the network may not be up yet,
// so it tries 10 times, 5 s apart (Windows Server 2025 has it already).
const openSSH = `# The OpenSSH server, started now and at every boot.
$attempt = 0
while ((Get-WindowsCapability -Online -Name 'OpenSSH.Server*').State -ne 'Installed') {
  $attempt++
  try {
    Add-WindowsCapability -Online -Name OpenSSH.Server~~~~0.0.1.0 | Out-Null
    break
  } catch {
    if ($attempt -ge 10) { throw "OpenSSH.Server could not be installed after $attempt attempts: $_" }
    Start-Sleep -Seconds 5
  }
}
Set-Service -Name sshd -StartupType Automatic
Start-Service -Name sshd
# Inbound TCP: 22 for SSH, 10250 for the kubelet, 9182 for windows_exporter's metrics.
foreach ($port in 22, 10250, 9182) {
  $rule = "wmcon-tcp-$port"
  if (-not (Get-NetFirewallRule -Name $rule -ErrorAction SilentlyContinue)) {
    New-NetFirewallRule -Name $rule -DisplayName "wmcon: inbound TCP $port" -Direction Inbound -Protocol TCP -LocalPort $port -Action Allow | Out-Null
  }
}
# The one key allowed to log in as an administrator (authorized_keys form, ending in a newline).
`

// authorize writes the key file, restricts it to Administrators (S-1-5-32-544) and SYSTEM (S-1-5-18) — sshd
// ignores the file otherwise — and turns password logins off. SIDs rather than names keep it working on
// localized Windows.
const authorize = `$sshDir = Join-Path $env:ProgramData 'ssh'
$keyFile = Join-Path $sshDir 'administrators_authorized_keys'
[System.IO.File]::WriteAllText($keyFile, $authorizedKey + "` + "`" + `n", [System.Text.Encoding]::ASCII)
icacls.exe $keyFile /inheritance:r /grant '*S-1-5-32-544:F' /grant '*S-1-5-18:F' | Out-Null
# Keys only: no passwords over SSH.
$sshdConfig = Join-Path $sshDir 'sshd_config'
$kept = Get-Content -Path $sshdConfig | Where-Object { $_ -notmatch '^\s*#?\s*(PubkeyAuthentication|PasswordAuthentication)\b' }
Set-Content -Path $sshdConfig -Encoding ascii -Value (@('PubkeyAuthentication yes', 'PasswordAuthentication no') + $kept)
Restart-Service -Name sshd
`

// Runs says why platform's boot agent would not run script as user data, nil when it would: EC2Launch and
// cloudbase-init run only a <powershell> block, GCP's agent only a bare script.
func Runs(script []byte, platform string) error {
	wrapped := bytes.Contains(script, []byte("<powershell>"))
	switch {
	case strings.EqualFold(platform, "GCP") && wrapped:
		return errors.New("it is wrapped in <powershell>…</powershell>, which GCP's agent does not run")
	case !strings.EqualFold(platform, "GCP") && !wrapped:
		return fmt.Errorf("it is not wrapped in <powershell>…</powershell>, so the %s boot agent does not run it", platformName(platform))
	}
	return nil
}

func platformName(p string) string {
	if p == "" {
		return "instance's"
	}
	return p
}
